"""The temporal rules of DESIGN.md as a pure function: given a (subject, predicate) timeline and a new
assertion, decide what to write. No I/O here; `graphmem.store.facts` reads the timeline under a lock on the
subject, calls `decide`, and writes the decision in the same transaction.

Rules (DESIGN.md, "Temporal rules"):
- same subject, predicate and object valid at the new `valid_from` -> duplicate: add provenance; an end the new
  assertion gives closes the fact there, and a stronger source or confidence strengthens it;
- single-valued, new object, `valid_from` at or after the current fact's -> close the current fact at the new
  `valid_from` and link `(new)-[:SUPERSEDES]->(old)`;
- out of order (an older `valid_from` than a later fact's) -> store as history, closed at the next fact's start;
  the fact it lands inside is closed at its start; the later fact stays current;
- an inferred fact never supersedes a user_explicit/user_confirmed/system fact, and never one inferred with
  higher confidence -> rejected with a reason.
A duplicate's later start is kept on the stored fact (`TimelineFact.restated`): when a later decision or a
retraction (`graphmem.store.facts.retract`) cuts that fact before it, `graphmem.store.facts` asserts the value again
from there, so the timeline does not depend on the order in which the statements arrived.
Multi-valued predicates never close another object's fact: each distinct object is its own fact; the same object
from an earlier start than its stored fact is history, closed where the stored one begins.
An assertion stored as history just before a fact of the same object that it runs into (no end, or one past that
fact's start: "Acme since 2020" before an inferred "Acme since 2024") also says that fact: when it is a stronger
belief (source or confidence) it `confirms` it and strengthens it, as a duplicate would (explicit beats inferred
whatever the order).
An end stated for a value ends it wherever it falls, however the value's statements were split into facts: an
assertion with an end closes there the facts of its value that start inside its interval and run past it, as a
duplicate's end closes the fact it says again ("VP from February until June" after "VP since April": VP
February-June, as in the other order; `_ended_within`), and a new fact of a value that starts inside the
interval a stored fact of it was stated to hold, after that fact was cut, ends where that one was stated to
(`TimelineFact.stated_to`, `_said_to_end`).
A symmetric predicate's facts stored the other way round are part of the timeline (`graphmem.store.facts` passes
them in as the subject's own), so "Frank knows Dana" is a duplicate of "Dana knows Frank".
A recorded clear of the predicate (`clears`: a CRM field set to null, kept whether or not it found a value to close)
ends a new fact that starts before it and would run past it: the fact is stored retracted at the clear, as it would
have been had it arrived before the clear ("title: null" in March, then "CTO since February" ends in March). A fact
starting at or after the clear is not touched by it.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

SOURCE_RANK = {"inferred": 0, "user_explicit": 1, "user_confirmed": 1, "system": 1}


@dataclass
class TimelineFact:
    """One stored fact of the timeline, as the rules need it."""

    id: str
    object_key: str
    valid_from: datetime
    valid_to: datetime | None
    confidence: float
    source: str
    status: str = "current"
    value_retraction: bool = False
    """Retracted by a retraction that named this fact's object or value ("I no longer want email"), not the
    predicate as a whole ("I no longer have a title")."""
    retraction_to: datetime | None = None
    """The end a retraction of the whole predicate gave this fact before it was closed earlier (a duplicate's end,
    a value arriving late): the predicate still has no value from there on."""
    restated: list[tuple[datetime, str, str, float, datetime | None]] = field(default_factory=list)
    """Later starts this fact's value was said again from while it held, each a duplicate, as (valid_from,
    episode_id, source, confidence, valid_to: the end it stated, else None), oldest first. When the fact is cut
    before one of them (a value arriving late, an end stated later, a retraction) that value holds again from
    there, up to that end (`graphmem.store.facts`)."""

    stated_to: datetime | None = None
    """The end the statements of this fact gave it (its own, or a duplicate's: `stated_valid_to`), else None. The
    value was said to end there: a fact of it that starts inside [valid_from, stated_to) after this one was cut
    ends there too (`decide`)."""

    def open_at(self, t: datetime) -> bool:
        return self.valid_from <= t and (self.valid_to is None or t < self.valid_to)


@dataclass
class Assertion:
    """The new fact being asserted (times already UTC)."""

    id: str
    object_key: str
    valid_from: datetime
    valid_to: datetime | None
    confidence: float
    source: str


@dataclass
class Decision:
    """What to write. `action` as in `graphmem.models.AssertOutcome`.

    closes: (fact_id, valid_to) pairs to close; supersedes: (newer_id, older_id) links to add;
    unlinks: (newer_id, older_id) links to remove; valid_to: the new fact's own end; retracted: that end is a
    retraction's (the new fact arrived late, inside an interval a retraction had already ended); strengthen:
    (source, confidence) a duplicate's stored fact takes (a re-statement by a stronger source).
    """

    action: str
    fact_id: str | None = None
    valid_to: datetime | None = None
    closes: list[tuple[str, datetime]] = field(default_factory=list)
    supersedes: list[tuple[str, str]] = field(default_factory=list)
    unlinks: list[tuple[str, str]] = field(default_factory=list)
    reason: str | None = None
    retracted: bool = False
    strengthen: tuple[str, float] | None = None
    confirms: str | None = None
    """A stored fact (not `fact_id`) the assertion says too, as a stronger belief: the same object from a later
    start, which the new history runs into. It gets the assertion's provenance (a confirmation) and `strengthen`."""


def _stronger(new: Assertion, f: TimelineFact) -> tuple[str, float] | None:
    """The (source, confidence) `f` takes when `new` says it again, if `new` is a stronger belief (a higher-ranked
    source, or a higher confidence from a source of the same rank); else None."""
    rn, ro = SOURCE_RANK[new.source], SOURCE_RANK[f.source]
    if rn > ro or (rn == ro and new.confidence > f.confidence):
        return (new.source if rn > ro else f.source, max(new.confidence, f.confidence))
    return None


def _runs_into(new: Assertion, later: TimelineFact | None, valid_to: datetime | None) -> bool:
    """Whether `new`, of the same object as the `later` fact, says that value still holds when `later` starts."""
    return (later is not None and later.object_key == new.object_key
            and (valid_to is None or valid_to > later.valid_from))


def _duplicate(f: TimelineFact, new: Assertion, timeline: list[TimelineFact], stated_end: bool = True) -> Decision:
    """The same object again while `f` holds it: no new fact (provenance only). What the assertion adds is kept:
    an end (`new.valid_to` before `f`'s end closes `f` there, and so it does the later facts of the value in
    `timeline` that start before it and run past it, `_ended_within`, unless `new` may not supersede the fact, when
    the outcome's reason says the end was not applied; a later end, or none, for a fact that has one is not applied
    either when it ends none of them, and the reason says so), and a stronger belief (a higher-ranked source, or a
    higher confidence from a source of the same rank: `strengthen`), so that a user re-stating an inferred fact
    makes it theirs and a later inference cannot replace it (DESIGN.md, "Temporal rules")."""
    d = Decision("duplicate", fact_id=f.id, strengthen=_stronger(new, f))
    if not stated_end:
        return d
    if any([_end(d, g, new) for g in [f, *_ended_within(timeline, new, f.id)]]):
        return d
    if f.valid_to is not None and (new.valid_to is None or new.valid_to > f.valid_to):
        d.reason = (f"the stored fact ends at {f.valid_to.isoformat()}; a later end or none was not applied "
                    "(an end is moved by correcting the fact)")
    return d


def _ended_within(timeline: list[TimelineFact], new: Assertion, skip: str | None = None) -> list[TimelineFact]:
    """The facts of `new`'s object in `timeline` (but `skip`) that start inside the interval `new` states, after
    `new.valid_from` and before its end, and run past that end: `new` says the value ends there, however its
    statements were split into facts (history closed where the next fact of the value begins, a restatement
    asserted again where the fact was cut, a value from elsewhere in between). None without an end."""
    if new.valid_to is None:
        return []
    return [f for f in timeline if f.id != skip and f.object_key == new.object_key
            and new.valid_from < f.valid_from < new.valid_to and (f.valid_to is None or f.valid_to > new.valid_to)]


def _said_to_end(timeline: list[TimelineFact], new: Assertion) -> datetime | None:
    """The earliest end a statement of `new`'s value gave past `new.valid_from` when it started before it: a
    stored fact's (`TimelineFact.stated_to`) or one of its restatements' (`TimelineFact.restated`), the fact
    having been cut before `new.valid_from` (or `new` would be its duplicate). The value was said to end there, so
    `new` ends there too, as it would had it arrived first (that statement's end would then have ended it). None
    if there is none."""
    said = [(f.valid_from, f.stated_to) for f in timeline if f.object_key == new.object_key]
    said += [(r[0], r[4]) for f in timeline if f.object_key == new.object_key for r in f.restated]
    return min((end for start, end in said if end is not None and start < new.valid_from < end), default=None)


def _end(d: Decision, f: TimelineFact, new: Assertion) -> bool:
    """Apply to `d` the end `new` states (`new.valid_to`, a statement) for `f`, a fact of its object that `new`
    says holds up to that end (it holds `new.valid_from`, or starts inside `new`'s interval): when that end is
    before `f`'s own end (or `f` has none), `f` is closed there (`d.closes`), unless `new` may not end `f`
    (`may_supersede`), when `d.reason` says the end was not applied. Returns whether the end was before `f`'s."""
    if new.valid_to is None or (f.valid_to is not None and new.valid_to >= f.valid_to):
        return False
    reason = may_supersede(new, f)
    if reason:
        d.reason = "; ".join(filter(None, [d.reason, f"the end was not applied: {reason}"]))
    else:
        d.closes.append((f.id, new.valid_to))
    return True


def may_supersede(new: Assertion, old: TimelineFact) -> str | None:
    """None if `new` may close `old`, else the reason it may not."""
    rn, ro = SOURCE_RANK[new.source], SOURCE_RANK[old.source]
    if rn < ro:
        return f"an inferred fact may not supersede a {old.source} fact ({old.id})"
    if rn == ro == 0 and new.confidence < old.confidence:
        return (f"an inferred fact with confidence {new.confidence:g} may not supersede one inferred with "
                f"confidence {old.confidence:g} ({old.id})")
    return None


SAME_START = ("the closed fact started at the same moment, so it now holds for no time (valid_to = valid_from) and "
              "stays as history of what was said; if it was wrong rather than replaced, correct it instead")
"""The reason of an outcome whose new value starts when the value it closes started: the later assertion wins,
and the earlier one is kept as a zero-length interval (never true at any `as_of`, still in the history)."""


def _cleared(clears: Sequence[datetime], valid_from: datetime, valid_to: datetime | None) -> datetime | None:
    """The earliest clear after `valid_from` that the interval [valid_from, valid_to) runs past, else None."""
    return min((c for c in clears if valid_from < c and (valid_to is None or c < valid_to)), default=None)


def decide(timeline: list[TimelineFact], new: Assertion, single_valued: bool,
           supersede_links: set[tuple[str, str]], *, stated_end: bool = True,
           clears: Sequence[datetime] = ()) -> Decision:
    """Apply the rules to one assertion. `timeline` holds the believed (not corrected, not candidate) facts of
    the same subject and predicate; `supersede_links` the existing (newer_id, older_id) links among them.
    `stated_end` False: `new.valid_to` is not something the assertion says (a correction keeps the wrong fact's
    interval), so a duplicate is not closed by it. `clears`: the times the predicate was cleared for the subject
    (see the module docstring)."""
    for f in timeline:
        if f.object_key == new.object_key and f.open_at(new.valid_from):
            return _duplicate(f, new, timeline, stated_end)
    if not single_valued:
        # the same object again from an earlier start: history up to the start of the stored fact, which stays
        # (two open facts of one triple would list it twice)
        same = sorted((f for f in timeline if f.object_key == new.object_key and f.valid_from > new.valid_from),
                      key=lambda f: f.valid_from)
        said = _said_to_end(timeline, new)
        valid_to = new.valid_to if said is None or (new.valid_to is not None and new.valid_to <= said) else said
        if same and _runs_into(new, same[0], valid_to):
            d = Decision("history", fact_id=new.id, valid_to=same[0].valid_from, supersedes=[(same[0].id, new.id)],
                         strengthen=_stronger(new, same[0]))
            if (cut := _cleared(clears, new.valid_from, d.valid_to)) is not None:
                d.valid_to, d.retracted, d.strengthen = cut, True, None   # a gap: it does not run into same[0]
            d.confirms = same[0].id if d.strengthen else None
        else:
            cut = _cleared(clears, new.valid_from, valid_to)
            d = Decision("created", fact_id=new.id, valid_to=valid_to if cut is None else cut,
                         retracted=cut is not None)
        if stated_end:   # an end it states for the value ends the facts of it inside, as it would as a duplicate
            for g in _ended_within(timeline, new):
                _end(d, g, new)
        return d

    ordered = sorted(timeline, key=lambda f: f.valid_from)
    # the fact whose interval holds the new start (a fact closed at its own start, [t, t), holds none: with
    # several facts starting at t, the open one is the one to close)
    prev = next((f for f in reversed(ordered) if f.open_at(new.valid_from)), None)
    later = next((f for f in ordered if f.valid_from > new.valid_from), None)
    prev_open = prev is not None
    if prev_open:
        reason = may_supersede(new, prev)
        if reason:
            return Decision("rejected", reason=reason)

    valid_to = new.valid_to
    # the value was said to end where a statement of it that the new start falls inside ended
    if (said := _said_to_end(timeline, new)) is not None and (valid_to is None or valid_to > said):
        valid_to = said
    if later is not None and (valid_to is None or valid_to > later.valid_from):
        valid_to = later.valid_from
    # A late value inside a retracted interval ends where the retraction said there was no value any more; a
    # retraction of one value ("I no longer want email") said nothing of another, which stays open.
    retracted = (prev_open and prev.status == "retracted" and not prev.value_retraction and prev.valid_to is not None
                 and (valid_to is None or valid_to > prev.valid_to))
    if retracted:
        valid_to = prev.valid_to
    # ... and so does one starting before such a retraction of a fact closed earlier since ("no title since 2023",
    # then "Manager until 2022": a Director from mid-2022 still ends in 2023)
    ends = [f.retraction_to for f in ordered if f.retraction_to is not None and f.valid_from <= new.valid_from
            and new.valid_from < f.retraction_to and (valid_to is None or valid_to > f.retraction_to)]
    if ends:
        valid_to, retracted = min(ends), True
    # ... and so does one starting before a recorded clear (a CRM null that arrived first, with nothing to close)
    if (cut := _cleared(clears, new.valid_from, valid_to)) is not None:
        valid_to, retracted = cut, True
    d = Decision("history" if later is not None else ("superseded" if prev_open else "created"),
                 fact_id=new.id, valid_to=valid_to, retracted=retracted)
    if prev_open:
        d.closes.append((prev.id, new.valid_from))
        d.supersedes.append((new.id, prev.id))
        if prev.valid_from == new.valid_from:   # two values from one moment (a CRM's two changes with one time)
            d.reason = SAME_START
        if later is not None and (later.id, prev.id) in supersede_links:
            d.unlinks.append((later.id, prev.id))
    if later is not None:
        d.supersedes.append((later.id, new.id))
        if not retracted and _runs_into(new, later, new.valid_to) and (stronger := _stronger(new, later)):
            d.confirms, d.strengthen = later.id, stronger
    if stated_end:   # an end it states for the value ends the facts of it inside, as it would as a duplicate
        for g in _ended_within(timeline, new):
            _end(d, g, new)
    return d
