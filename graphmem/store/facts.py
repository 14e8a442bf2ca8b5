"""Fact assertion (single and bulk share one path), retraction, correction and reads.

One call to `assert_batch` is one transaction: validate everything, resolve entities, lock the subjects (in id
order) and read their timelines (one round trip; subjects created by this very transaction need neither), apply
`graphmem.temporal.decide` to each assertion in order (later assertions see earlier ones), then write with a fixed
number of UNWIND queries whatever the batch size. Any error rolls the whole batch back: nothing is half-written.

Hot queries exchange times as ISO 8601 strings (parameters) and integer microseconds (results): the driver packs
or decodes a datetime in 50-100 us, which at a thousand facts a batch was most of the client's time.
"""
from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache

from graphmem.errors import InvalidInput, NotFound
from graphmem.identifiers import value_key as _value_key
from graphmem.models import AssertOutcome, EntityRef, Fact, FactIn, Provenance
from graphmem.ontology import Ontology
from graphmem.settings import Settings
from graphmem.store import entities
from graphmem.store.db import EntityGone, Tx, tenant_token, whole
from graphmem.store.fulltext import search_terms
from graphmem.temporal import SOURCE_RANK, Assertion, Decision, TimelineFact, decide
from graphmem.store.episodes import lock_retained_episodes
from graphmem.timeutil import from_us, utcnow


value_key = lru_cache(maxsize=65536)(_value_key)   # bulk batches repeat values ("Engineer", "email", ...)


def _fact(row: dict) -> Fact:
    return Fact(**row["fact"])


def iso(dt: datetime | None) -> str | None:
    """An aware datetime as ISO 8601 for a query parameter (the query stores it with `datetime()`); packing a
    string is far cheaper for the driver than packing a datetime."""
    return None if dt is None else dt.isoformat()


def _timeline_fact(t: dict) -> TimelineFact:
    return TimelineFact(t["id"], t["object_key"], from_us(t["valid_from_us"]), from_us(t["valid_to_us"]),
                        t["confidence"], t["source"], t["status"], t["value_retraction"],
                        from_us(t.get("retraction_to_us")), _restated_of(t), from_us(t.get("stated_to_us")))


def _restated_of(t: dict) -> list[tuple[datetime, str, str, float, datetime | None]]:
    """`TimelineFact.restated` from a timeline row's `restated` lists ([from_us, episode_id, source, confidence,
    to_us or None])."""
    return [(from_us(us), ep, src, conf, from_us(to)) for us, ep, src, conf, to in t.get("restated") or []]


def _at(prefix: str, name: str) -> str:
    """A field name under `prefix` ("facts[2]" + "predicate"), or the bare name without one."""
    return f"{prefix}.{name}" if prefix else name


SELF_REFERENCE = "self_reference: subject and object resolve to the same entity"
"""The `AssertOutcome.reason` of a fact rejected because its subject and object are one entity (with
`refuse_self_reference`)."""


def _kinds(kinds: list[str]) -> str:
    """Entity kinds as a message names them: "Organization", "Person or Organization", "a literal value"."""
    words = ["a literal value" if k == "literal" else k for k in kinds]
    return " or ".join([", ".join(words[:-1]), words[-1]] if len(words) > 1 else words)


def assert_batch(tx: Tx, tenant_id: str, facts: Sequence[FactIn], ontology: Ontology, settings: Settings,
                 field_prefix: str = "facts", refuse_self_reference: bool = False,
                 fields: Sequence[str] | None = None, stated_ends: bool = True,
                 now: datetime | None = None) -> list[AssertOutcome]:
    """Assert `facts` (each with an `episode_id`) under the temporal rules; one `AssertOutcome` per fact.

    A fact whose subject and object resolve to the same entity (by id, strong identifier, external id, email or
    name, whatever names the two references use) is an `InvalidInput` on "<field>.object"; with
    `refuse_self_reference` (extracted facts, refused one by one) it is not stored and its outcome is "rejected"
    with reason `SELF_REFERENCE`, the other facts going ahead. Entity resolution (creation, enrichment) has run
    for it either way. A name that several entities answer to is an `InvalidInput` on "<field>.subject.name" (or
    object), listing them; extracted facts (`refuse_self_reference`) take the name's owner
    (`graphmem.store.entities.resolve`, `namesakes`).

    Raises `InvalidInput` (unknown predicate, wrong kinds, an entity as its own object, oversized values, missing
    episode_id) or `NotFound`
    (unknown entity or episode id) naming the field, before anything is written: "<field_prefix>[i].<name>", or
    just "<name>" with `field_prefix` "" (one fact whose fields are the request's own, as in a correction);
    `fields`, when given, names each fact instead (a chunk of a larger batch: "facts[1000]"). With `stated_ends`
    False the facts' `valid_to` is not the caller's statement (a correction keeps the wrong fact's interval): a
    duplicate is not closed by it (`graphmem.temporal.decide`).

    `now` (aware UTC; default the time of the call) is the write's one transaction time: the facts' `recorded_at`,
    the ends' `closed_at`, the provenance's `recorded_at`, and the `created_at` of the entities the facts bring
    (`entities.resolve`), so a read at `known_at` = a fact's `recorded_at` sees its subject and object too. A stored
    fact past its retention at `now` (gone to every read, not yet swept) is left out of the timelines the rules
    read, so the write decides as it would after the sweep: a value said again is a new fact with only the new
    episode's provenance, not a renewal of the expired one (which would bring back its old provenance and history).
    """
    now = now or utcnow()
    fields = list(fields) if fields is not None else [f"{field_prefix}[{i}]" if field_prefix else ""
                                                      for i in range(len(facts))]
    preds = []
    for f, fld in zip(facts, fields):
        p = ontology.get(f.predicate, field=_at(fld, "predicate"))
        if f.episode_id is None:
            raise InvalidInput(f"{_at(fld, 'episode_id')}: every fact needs the episode it came from",
                               field=_at(fld, "episode_id"))
        for name, text in (("value", f.value), ("statement", f.statement)):
            if text is not None and len(text) > settings.max_value_chars:
                raise InvalidInput(f"{_at(fld, name)} is {len(text)} characters; the limit is "
                                   f"{settings.max_value_chars}", field=_at(fld, name))
        preds.append(p)

    # locked: an erasure of one of them either sees this write's facts or this write sees the episode gone; one past
    # its retention is gone to every read already, and is to this write too
    episode_times = lock_retained_episodes(tx, tenant_id, {f.episode_id for f in facts}, now)
    for f, fld in zip(facts, fields):
        if f.episode_id not in episode_times:
            raise NotFound(f"{_at(fld, 'episode_id')}: no episode {f.episode_id!r}", field=_at(fld, "episode_id"))

    refs, ref_fields, slots, sources = [], [], [], []
    for f, fld in zip(facts, fields):
        slots.append(len(refs)); refs.append(f.subject); ref_fields.append(_at(fld, "subject"))
        sources.append(f.episode_id)
        if f.object is not None:
            refs.append(f.object); ref_fields.append(_at(fld, "object")); sources.append(f.episode_id)
    resolved = entities.resolve(tx, tenant_id, refs, settings, ref_fields,
                                namesakes="owner" if refuse_self_reference else "refuse", episodes=sources,
                                now=now)

    rows: list[tuple | None] = []     # None: a self-reference refused (refuse_self_reference)
    for i, (f, p, fld) in enumerate(zip(facts, preds, fields)):
        subj = resolved[slots[i]]
        obj = resolved[slots[i] + 1] if f.object is not None else None
        if not p.accepts_subject(subj.kind):
            raise InvalidInput(f"{_at(fld, 'subject')}: {p.name} takes a subject of kind {_kinds(p.subject_kinds)}, "
                               f"not {subj.kind}", field=_at(fld, "subject.kind"))
        if not p.accepts_object(obj.kind if obj else None):
            if obj is None:   # name what was sent: a value where an entity was due
                raise InvalidInput(f"{_at(fld, 'value')}: {p.name} takes an entity of kind {_kinds(p.object_kinds)} "
                                   f"as its object, not a literal value; give object", field=_at(fld, "value"))
            raise InvalidInput(f"{_at(fld, 'object')}: {p.name} takes {_kinds(p.object_kinds)}, not {obj.kind}",
                               field=_at(fld, "object"))
        if obj is not None and obj.id == subj.id:
            if refuse_self_reference:
                rows.append(None)
                continue
            raise InvalidInput(f"{_at(fld, 'object')}: a fact joins two entities; this one names {subj.name!r} "
                               f"as its own object", field=_at(fld, "object"))
        valid_from = f.valid_from or episode_times[f.episode_id]
        if f.valid_to is not None and f.valid_to <= valid_from:
            raise InvalidInput(f"{_at(fld, 'valid_to')} must be after valid_from", field=_at(fld, "valid_to"))
        rows.append((f, p, subj, obj, valid_from))

    # Subjects this transaction just created have no facts and nobody else can see them yet: no lock to take and
    # no timeline to read. The others are locked in id order, then their timelines read, in one round trip.
    timelines: dict[tuple[str, str], list[TimelineFact]] = defaultdict(list)
    cleared_at: dict[tuple[str, str], list[datetime]] = defaultdict(list)   # recorded clears (`record_clear`)
    links: set[tuple[str, str]] = set()
    # A symmetric predicate's fact may be stored either way round ("Frank knows Dana" for "Dana knows Frank"):
    # its object's timeline is locked and read too (`_pair_view`).
    known = [(r[2].id, r[1].name) for r in rows if r is not None and not r[2].new]
    known += [(r[3].id, r[1].name) for r in rows if r is not None and r[1].symmetric and r[3] is not None
              and not r[3].new]
    if known:
        pairs = sorted(set(known))
        read = tx.one("facts/lock_timelines", tenant_id=tenant_id, ids=sorted({s for s, _ in pairs}),
                      pairs=[{"subject_id": s, "predicate": p} for s, p in pairs], now=now)
        for t in read["facts"]:
            timelines[(t["subject_id"], t["predicate"])].append(_timeline_fact(t))
            links.update((t["id"], older) for older in t["supersedes"])
        for c in read["clears"]:
            cleared_at[(c["subject_id"], c["predicate"])].append(from_us(c["at_us"]))

    creates, provenance, closes, unlink_rows, outcomes = [], [], {}, [], []
    strengthen: dict[str, dict] = {}          # fact id -> the stronger belief a duplicate brought
    new_links: dict[tuple[str, str], None] = {}   # (newer, older) SUPERSEDES links to make, in order
    ttl_until: dict[str, str | None] = {}     # predicate -> retain_until of a fact asserted now (ISO)
    restated: dict[str, TimelineFact] = {}    # fact id -> its timeline fact whose `restated` list changed
    # the batch's facts in order; a fact's restatements that a decision cut off are asserted right after it, as
    # their own assertions (`_restatements`), with no outcome of their own
    queue = deque((row, fid, True) for row, fid in zip(rows, entities.new_ids(len(rows))))
    while queue:
        row, fid, primary = queue.popleft()
        if row is None:
            outcomes.append(AssertOutcome(action="rejected", reason=SELF_REFERENCE))
            continue
        f, p, subj, obj, valid_from = row
        okey = f"e:{obj.id}" if obj else f"v:{value_key(f.value)}"
        new = Assertion(fid, okey, valid_from, f.valid_to, f.confidence, f.source)
        timeline = timelines[(subj.id, p.name)]
        reverse = timelines[(obj.id, p.name)] if p.symmetric and obj is not None else []
        if p.sensitive and f.source == "inferred":
            d = Decision("candidate", fact_id=new.id, valid_to=f.valid_to)
        else:
            cleared = cleared_at.get((subj.id, p.name), [])
            if p.symmetric and obj is not None:   # a clear of the pair's other end ("Zoe knows nobody")
                cleared = cleared + cleared_at.get((obj.id, p.name), [])
            d = decide(timeline + _pair_view(reverse, subj.id, okey), new, p.single_valued, links,
                       stated_end=stated_ends, clears=cleared)
        if primary:
            outcomes.append(AssertOutcome(action=d.action, fact_id=d.fact_id, reason=d.reason,
                                          closed_fact_id=d.closes[0][0] if d.closes else None))
        if d.action == "rejected":
            continue
        if p.name not in ttl_until:
            ttl = ontology.ttl(p)
            ttl_until[p.name] = iso(now + ttl) if ttl else None

        def confirm(fact_id: str) -> None:
            """`f` says the stored `fact_id` again: a confirmation, and its stronger belief (`d.strengthen`)."""
            provenance.append({"fact_id": fact_id, "episode_id": f.episode_id, "confidence": f.confidence,
                               "source": f.source, "role": "confirmation", "retain_until": ttl_until[p.name]})
            for tf in timeline + reverse:
                if tf.id == fact_id and d.strengthen:
                    tf.source, tf.confidence = d.strengthen
                    strengthen[tf.id] = {"id": tf.id, "source": tf.source, "confidence": tf.confidence}

        if d.action == "duplicate":
            confirm(d.fact_id)
            if p.single_valued and (stated_ends or f.valid_to is None):
                _restate(restated, timeline, d.fact_id, valid_from, f)
            _close(closes, timeline + reverse, d.closes, stated=True,   # the end the duplicate's assertion gave
                   by=f.episode_id)
            queue.extendleft(reversed(_restatements(tx, tenant_id, restated, timeline, d.closes, p, subj, now,
                                                    creates)))
            continue
        statement = f.statement or p.statement(subj.name, obj.name if obj else f.value)
        status = ("candidate" if d.action == "candidate" else "current" if d.valid_to is None
                  else "retracted" if d.retracted else "closed")
        creates.append({"id": new.id, "subject_id": subj.id, "object_id": obj.id if obj else None,
                        "episode_id": f.episode_id, "predicate": p.name, "value": f.value, "object_key": okey,
                        "statement": statement, "search_terms": search_terms(tenant_id, statement),
                        "valid_from": iso(valid_from), "valid_to": iso(d.valid_to),
                        "stated_valid_to": iso(f.valid_to) if stated_ends else None,
                        "confidence": f.confidence, "source": f.source, "fact_class": p.fact_class,
                        "status": status, "retain_until": ttl_until[p.name]})
        if d.action == "candidate":
            continue
        if d.confirms:   # the later fact of the same object this history runs into is said too (graphmem.temporal)
            confirm(d.confirms)
        _close(closes, timeline + reverse, d.closes,   # an end it states for its value is its episode's
               by=f.episode_id if stated_ends and f.valid_to is not None else None, at=f.valid_to)
        queue.extendleft(reversed(_restatements(tx, tenant_id, restated, timeline, d.closes, p, subj, now,
                                                creates)))
        timeline.append(TimelineFact(new.id, okey, valid_from, d.valid_to, f.confidence, f.source, status,
                                     stated_to=f.valid_to if stated_ends else None))
        for pair in d.unlinks:   # a link made earlier in this batch is simply not made; a stored one is removed
            if new_links.pop(pair, False) is None:
                continue
            unlink_rows.append({"newer": pair[0], "older": pair[1]})
        new_links.update(dict.fromkeys(d.supersedes))
        links.update(d.supersedes)
        links.difference_update(d.unlinks)

    if creates:
        made = tx.one("facts/create_batch", tenant_id=tenant_id, tenant_token=tenant_token(tenant_id), now=now,
                      rows=creates)
        if (made["created"], made["with_object"]) != (len(creates), sum(1 for r in creates if r["object_id"])):
            # an entity resolved above was deleted (a forget) before the facts could link to it: run it all again
            raise EntityGone("a subject or object entity of these facts was deleted by a concurrent write")
    if closes:
        tx.run("facts/close_batch", tenant_id=tenant_id, now=now, rows=list(closes.values()))
    if unlink_rows:
        tx.run("facts/unlink_supersedes", tenant_id=tenant_id, rows=unlink_rows)
    if new_links:
        tx.run("facts/link_supersedes", tenant_id=tenant_id, now=now,
               rows=[{"newer": n, "older": o} for n, o in new_links])
    if provenance:
        tx.run("facts/add_provenance", tenant_id=tenant_id, now=now, rows=provenance)
    if strengthen:
        tx.run("facts/strengthen", tenant_id=tenant_id, rows=list(strengthen.values()))
    _record_restatements(tx, tenant_id, restated)
    return outcomes


def _record_restatements(tx: Tx, tenant_id: str, restated: dict[str, TimelineFact]) -> None:
    """Write the `restated` lists of the timeline facts in `restated` (fact id -> fact) (`facts/set_restatements`)."""
    if restated:
        tx.run("facts/set_restatements", tenant_id=tenant_id, rows=[
            {"id": tf.id, "from": [iso(r[0]) for r in tf.restated], "by": [r[1] for r in tf.restated],
             "source": [r[2] for r in tf.restated], "confidence": [r[3] for r in tf.restated],
             "to": [iso(r[4] or r[0]) for r in tf.restated]}
            for tf in restated.values()])


def _restate(restated: dict[str, TimelineFact], timeline: list[TimelineFact], fact_id: str, valid_from: datetime,
             f: FactIn) -> None:
    """Keep a duplicate's later start, and the end it gave (`f.valid_to`, a statement), on the stored fact it says
    again (`TimelineFact.restated`), so that the value still holds from there (up to that end) if the fact is cut
    before it later on."""
    for tf in timeline:
        if tf.id == fact_id and valid_from > tf.valid_from and all(r[:2] != (valid_from, f.episode_id)
                                                                   for r in tf.restated):
            tf.restated = sorted([*tf.restated, (valid_from, f.episode_id, f.source, f.confidence, f.valid_to)],
                                 key=lambda r: r[0])
            restated[tf.id] = tf


def _restatements(tx: Tx, tenant_id: str, restated: dict[str, TimelineFact], timeline: list[TimelineFact],
                  ends: list[tuple[str, datetime]], p, subj, now: datetime, creates: list[dict]) -> list[tuple]:
    """The batch rows that assert again, each from its own start, the restatements of the facts a decision just
    ended (`ends`: (fact id, new valid_to)) that start at or after that end (`_said_again`). `creates`: the
    `facts/create_batch` rows of the batch so far (a fact it made is not stored yet)."""
    rows: list[tuple] = []
    for fid, end in ends:
        tf = next((t for t in timeline if t.id == fid), None)
        again = [] if tf is None else _said_again(tx, tenant_id, restated, tf, end, subj.id, p.name, now,
                                                  next((c for c in creates if c["id"] == fid), None))
        obj = entities.get(tx, tenant_id, again[0].object.id, "object") if again and again[0].object else None
        rows += [((f, p, subj, obj, f.valid_from), entities.new_ids(1)[0], False) for f in again]
    return rows


def _said_again(tx: Tx, tenant_id: str, restated: dict[str, TimelineFact], tf: TimelineFact, end: datetime,
                subject_id: str, predicate: str, now: datetime, made: dict | None = None) -> list[FactIn]:
    """The assertions of `tf`'s value (a fact of `subject_id`'s `predicate`) from each of its restatements
    (`TimelineFact.restated`) that start at or after `end`, the end a decision or a retraction just gave it, oldest
    first: the value was said to hold then, and a later value arriving, an end stated or a retraction before it
    does not unsay that (nor one at that very time: had it arrived after the cut, it would be a new fact from
    there). Each is by the restatement's episode, source, confidence and end (none when it gave none), with the
    fact's value or object and statement. They leave `tf`'s list (`restated` records it changed, for
    `_record_restatements`; the new fact keeps them, as its assertion and confirmations); one whose episode is gone
    (erased, past retention at `now`) is dropped. `made`: `tf`'s `facts/create_batch` row when the batch made it
    (not stored yet), else the fact is read (`NotFound` if it is not the tenant's)."""
    cut = [r for r in tf.restated if r[0] >= end]
    if not cut:
        return []
    tf.restated = [r for r in tf.restated if r[0] < end]
    restated[tf.id] = tf
    alive = lock_retained_episodes(tx, tenant_id, {r[1] for r in cut}, now)
    made = made or get(tx, tenant_id, tf.id).model_dump()
    obj = EntityRef(id=made["object_id"]) if made["object_id"] else None
    return [FactIn(subject=EntityRef(id=subject_id), predicate=predicate, value=made["value"], object=obj,
                   valid_from=at, valid_to=to, source=source, confidence=confidence, episode_id=episode_id,
                   statement=made["statement"])
            for at, episode_id, source, confidence, to in cut if episode_id in alive]


def _pair_view(reverse: list[TimelineFact], subject_id: str, object_key: str) -> list[TimelineFact]:
    """The facts of a symmetric predicate stored the other way round (the object's timeline `reverse`, facts whose
    object is `subject_id`), as the subject's own timeline would hold them (object key `object_key`, the object's):
    "Frank knows Dana" is the pair's fact when "Dana knows Frank" is asserted, so the assertion is its duplicate,
    or history before it, and not a second fact of one relation. Copies: `_close` updates the originals by id."""
    return [replace(tf, object_key=object_key) for tf in reverse if tf.object_key == f"e:{subject_id}"]


def _close(closes: dict[str, dict], timeline: list[TimelineFact], ends: list[tuple[str, datetime]],
           stated: bool = False, by: str | None = None, at: datetime | None = None) -> None:
    """Record the decision's `ends` ((fact id, valid_to) pairs) as `facts/close_batch` rows in `closes`, and in
    the batch's in-memory `timeline`, so a later fact of the batch sees them. `stated`: an assertion of the fact
    itself gave that end (kept as its `stated_valid_to`, for erasure repair). `by`: the episode whose assertion
    stated the ends (all of them with `stated`, else those at `at`, the end it stated), recorded on the fact
    (`ended_by` / `ended_to`, appended to any an earlier row of the batch recorded) so that erasing that episode
    undoes them (`graphmem.governance.erasure.unsay_ends`)."""
    for fid, vt in ends:
        said = by is not None and (stated or vt == at)
        earlier = closes.get(fid, {})
        closes[fid] = {"id": fid, "valid_to": iso(vt), "status": "closed", "stated": stated,
                       "ended_by": earlier.get("ended_by", []) + ([by] if said else []),
                       "ended_to": earlier.get("ended_to", []) + ([iso(vt)] if said else [])}
        for tf in timeline:
            if tf.id == fid:
                tf.valid_to, tf.status = vt, "closed"
                tf.stated_to = vt if stated else tf.stated_to


def about_all(tx: Tx, tenant_id: str, entity_id: str, at: datetime, predicate: str) -> list[Fact]:
    """Every `predicate` fact about the entity (either end) valid at `at`, as `about` reads them, page after page
    of 1000: for a retraction, which must close them all (one page left the facts naming a hub with 1000 facts of
    its own as object unread, and "Hub knows nobody any more" left them open)."""
    out: list[Fact] = []
    while True:
        page = about(tx, tenant_id, entity_id, as_of=at, predicates=[predicate], offset=len(out), limit=1000)
        out += page
        if len(page) < 1000:
            return out


class Outranked(Exception):
    """`retract(..., keep_stronger=True)` found, under the subjects' locks, a fact to close whose source ranks above
    the retraction's (`graphmem.temporal.SOURCE_RANK`); nothing was closed. `fact_id` and `source` name that fact
    and its source."""

    def __init__(self, fact_id: str, source: str):
        super().__init__(f"fact {fact_id} was stated by a {source} source")
        self.fact_id, self.source = fact_id, source


def retract(tx: Tx, tenant_id: str, subject_id: str, predicate: str, at: datetime, episode_id: str,
            object_key: str | None = None, source: str = "user_explicit", symmetric: bool = False,
            keep_stronger: bool = False, *, ontology: Ontology, settings: Settings) -> list[str]:
    """Close the facts of (subject, predicate[, object]) valid at `at`, with status `retracted` and the episode as
    provenance (role `retraction`). Nothing is deleted. A closed fact's value said again from `at` or later
    (its restatements, `TimelineFact.restated`) holds again from there, asserted by that episode through
    `assert_batch` (with the tenant's `ontology` and `settings`), as it would had the retraction arrived before the
    restatement; one from before `at` stays a confirmation of the closed fact. For a `symmetric` predicate (KNOWS)
    the pair's facts stored the other way round are closed too ("Dana no longer knows Frank" closes "Frank knows
    Dana"); for their subject that is a retraction of one value, not of the whole predicate. A fact past its
    retention (gone to every read, not yet swept) is not retracted: it is not there. Returns the closed
    fact ids; `NotFound` if none was valid (field `value` or `object_id` when `object_key` was given, else
    `predicate`). With `keep_stronger`, `Outranked` if one of them has a source ranking above `source` (an inferred
    end does not close what a user or a system stated), decided under the subjects' locks, so a restatement
    committed before them counts; then nothing is closed."""
    targets: list[tuple[str, str | None]] = [(subject_id, object_key)]
    if symmetric and object_key is None:
        targets += sorted({(f.subject_id, f"e:{subject_id}")
                           for f in about_all(tx, tenant_id, subject_id, at, predicate) if f.object_id == subject_id})
    elif symmetric and object_key.startswith("e:"):
        targets.append((object_key[2:], f"e:{subject_id}"))
    ids = sorted({s for s, _ in targets})
    tx.rows("facts/lock_subjects", tenant_id=tenant_id, ids=ids)
    now = utcnow()
    rows = tx.rows("facts/timelines", tenant_id=tenant_id,
                   pairs=[{"subject_id": s, "predicate": predicate} for s in ids], now=now)
    rows = [r for r in rows
            if any(r["subject_id"] == s and (k is None or r["object_key"] == k) for s, k in targets)
            and from_us(r["valid_from_us"]) <= at and (r["valid_to_us"] is None or from_us(r["valid_to_us"]) > at)]
    hit = [(r["id"], r["subject_id"] != subject_id or object_key is not None) for r in rows]
    if not hit and object_key is not None:   # the fact may be there with another value: name what did not match
        field, what = ("value", "value") if object_key.startswith("v:") else ("object_id", "object")
        raise NotFound(f"{field}: no {predicate} fact with this {what} valid at {at.isoformat()} to retract",
                       field=field)
    if not hit:
        raise NotFound(f"no {predicate} fact valid at {at.isoformat()} to retract", field="predicate")
    stronger = [r for r in rows if keep_stronger and SOURCE_RANK[r["source"]] > SOURCE_RANK[source]]
    if stronger:
        raise Outranked(stronger[0]["id"], stronger[0]["source"])
    tx.run("facts/close_batch", tenant_id=tenant_id, now=now,
           rows=[{"id": fid, "valid_to": iso(at), "status": "retracted", "value_retraction": one_value}
                 for fid, one_value in hit])
    hit = [fid for fid, _ in hit]
    tx.run("facts/add_provenance", tenant_id=tenant_id, now=now, rows=[
        {"fact_id": fid, "episode_id": episode_id, "confidence": 1.0, "source": source, "role": "retraction"}
        for fid in hit])
    restated: dict[str, TimelineFact] = {}
    again = [f for r in rows for f in _said_again(
        tx, tenant_id, restated, TimelineFact(r["id"], r["object_key"], from_us(r["valid_from_us"]), at,
                                              r["confidence"], r["source"], restated=_restated_of(r)),
        at, r["subject_id"], predicate, now)]
    _record_restatements(tx, tenant_id, restated)
    if again:
        assert_batch(tx, tenant_id, again, ontology, settings, field_prefix="", now=now)
    return hit


def record_clear(tx: Tx, tenant_id: str, entity_id: str, predicate: str, at: datetime, episode_id: str,
                 side: str = "subject") -> None:
    """Record that episode `episode_id` cleared `predicate` on the entity as of `at` (a CRM field set to null,
    `graphmem.ingest.apply`), whether or not a fact was valid then to retract, taking the entity's write lock.
    `side` "subject": the entity's own `predicate` facts; `assert_batch` then ends a later-arriving fact of the
    entity that starts before `at` and would run past it at `at`, retracted (`graphmem.temporal.decide`). "object":
    the `predicate` facts pointing at the entity (read back by `clears`). Kept with the episode: erasing or expiring
    the episode removes it. Recording the same clear again is a no-op."""
    tx.run("facts/record_clear", tenant_id=tenant_id, entity_id=entity_id, predicate=predicate, at=iso(at),
           episode_id=episode_id, side=side, now=utcnow())


def clears(tx: Tx, tenant_id: str, entity_id: str, predicate: str, side: str = "subject") -> list[datetime]:
    """The times of the recorded clears of `predicate` on the entity, on `side` (`record_clear`), earliest first.
    Take the entity's lock first for a decision that depends on them."""
    return [from_us(r["at_us"]) for r in tx.rows("facts/clears", tenant_id=tenant_id, entity_id=entity_id,
                                                   predicate=predicate, side=side)]


def get(tx: Tx, tenant_id: str, fact_id: str) -> Fact:
    """The fact `fact_id` of this tenant; `NotFound` otherwise."""
    row = tx.one("facts/get", tenant_id=tenant_id, id=fact_id, now=utcnow())
    if row is None or not whole(row["fact"], Fact):   # none, or deleted while it was read
        raise NotFound(f"no fact {fact_id!r}", field="fact_id")
    return _fact(row)


def about(tx: Tx, tenant_id: str, entity_id: str, *, as_of: datetime | None = None,
          known_at: datetime | None = None, include_superseded: bool = False,
          predicates: list[str] | None = None, offset: int = 0, limit: int = 1000) -> list[Fact]:
    """Facts where the entity is subject or object, valid at `as_of` and believed at `known_at` (both default now),
    each as it was believed at `known_at` (`Fact.as_known_at`); by predicate, valid_from, recorded_at and id, the
    `limit` after the first `offset`."""
    now = utcnow()
    return [_fact(r).as_known_at(known_at) for r in tx.rows(
        "facts/about_entity", tenant_id=tenant_id, entity_id=entity_id, as_of=as_of or now, known_at=known_at or now,
        now=now, include_superseded=include_superseded, predicates=predicates, offset=offset, limit=limit)
        if whole(r["fact"], Fact)]


def history(tx: Tx, tenant_id: str, fact_id: str, ontology: Ontology, *, offset: int = 0,
            limit: int = 1000) -> list[Fact]:
    """The supersession timeline `fact_id` belongs to (corrections included), oldest `valid_from` first, then
    recorded_at and id: the `limit` versions after the first `offset`. `NotFound` if the fact is not in this
    tenant."""
    fact = get(tx, tenant_id, fact_id)
    p = ontology.predicates.get(fact.predicate)
    return [_fact(r) for r in tx.rows("facts/history", tenant_id=tenant_id, id=fact_id,
                                      single_valued=p is not None and p.single_valued,
                                      symmetric=p is not None and p.symmetric, now=utcnow(),
                                      offset=offset, limit=limit)
            if whole(r["fact"], Fact)]


def provenance(tx: Tx, tenant_id: str, fact_id: str, *, offset: int = 0, limit: int = 1000) -> list[Provenance]:
    """The episodes behind `fact_id`, oldest recorded first (then occurred_at, episode id, role): the `limit`
    after the first `offset`. `NotFound` if the fact is not in this tenant."""
    get(tx, tenant_id, fact_id)
    return [Provenance(**r) for r in tx.rows("facts/provenance", tenant_id=tenant_id, id=fact_id, now=utcnow(),
                                             offset=offset, limit=limit)]
