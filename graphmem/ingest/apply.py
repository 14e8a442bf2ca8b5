"""Applying one episode's extraction to the graph: its entities, facts and retractions, in ONE transaction.

The worker (`graphmem.ingest.worker`) owns the job lifecycle (claim, lease, retries, dead-letter); this module owns
the write. It works in two steps so the worker can link entity mentions (LLM disambiguation, a network call that
must stay outside the transaction) in between:

1. `screen_extraction(extracted, settings, ontology, episode_id)` (no I/O) applies the write policy to the facts
   and entities and places each retraction in record order among the facts that passed -> `Screened`.
2. `apply_extraction(db, claim, extracted, screened, settings, ontology, stats=...)` writes it all in one
   transaction and marks the job done.

Rules enforced:

- Fencing: the transaction first checks the worker still holds the claim (`jobs/fence`); if not it raises
  `LeaseLost` and writes nothing, so a job's facts are written exactly once even when a lease expired mid-job.
  Retention: the same query, under the same lock, checks the episode is still within retention (its own
  `retain_until`, its session's idle TTL); if not it raises `jobs.PastRetention` and writes nothing (a job claimed
  just before its episode passed retention writes no fact, entity or refusal from it).
- Record order: facts and retractions are applied in the order of the episode's records (a retraction at
  `position` p goes after the first p facts), so a later record's value is asserted after an earlier record's null
  and vice versa. Supersession and out-of-order history are the core's (`graphmem.store.facts.assert_batch`).
- Self-reference: a fact whose subject and object resolve to the same entity (a contact whose manager is the
  contact under another name, by external id, email or name) is refused alone by the core
  (`refuse_self_reference`), where both resolved ids are known; it is recorded as a `self_reference` refusal
  named by its place among the extraction's facts, counted in `facts_refused` instead of `facts_asserted`, and an
  exclusive fact refused so displaces nobody. The job's other facts are stored.
- Temporal rules: a fact the core rejects (an inferred fact that would supersede a stated, confirmed or system
  one, or one inferred with higher confidence) is recorded as a `temporal_rule` refusal with the rule's reason,
  and counted in `facts_refused` too.
- Refused alone: a fact that entity resolution or the core refuses with an error naming it (a related record named
  by an id no entity has, a reference whose email belongs to an entity of another kind, identifiers naming two
  entities) costs that fact only: the transaction is rolled back and written again without it, the fact recorded
  as an `unknown_entity` or `invalid_reference` refusal (`_refuse_alone`). A mapped record's own entity that cannot
  be resolved fails the job.
- Partial values (`Extracted.partials`, a CRM record giving a deal's amount without its currency): just before the
  fact is asserted (after the episode's earlier facts), its subject is resolved and locked and its `predicate`
  facts are read; the value valid at the fact's `valid_from` gives the missing fields
  (`graphmem.ingest.mapping.complete_value`). No value valid then, a value that does not read through the template
  (or reads two ways), a missing field the record set to null, or a value of that subject starting after the change
  (a later change was applied first; its own missing fields may have come from the value this one replaces) refuses
  the fact alone as `incomplete_value`, with a detail naming the fields, never their values.
- Email taken (`graphmem.errors.EmailTaken`: a record, named by its external id, gives its entity an email another
  entity holds): the email alone is refused as `email_taken`, naming the reference's `.email`; it is dropped from
  every reference of the extraction that gives it with those external ids and the rest is written again (the
  entity keeps its email, its other changes apply; the two entities are not merged).
- CRM null retractions (`Retraction.exclusive` False): the clear is recorded on the entity
  (`graphmem.store.facts.record_clear`, kept with the episode), then the facts of (subject, predicate) valid at
  `r.at` are closed through `graphmem.store.facts.retract` (status "retracted", `valid_to` = `r.at`, the episode
  as provenance); when the nulled field named the subject, the retraction names the object and closes the facts of
  that predicate pointing at it. Nothing valid at `r.at` closes nothing, but the recorded clear still ends a value
  older than `r.at` that arrives later (or is written concurrently by another worker): it ends at `r.at`, retracted
  (`graphmem.temporal.decide`; an exclusive fact's new subject is bounded by it in `_exclusive`).
- Extracted ends (`Extracted.ends`: an LLM fact with a `valid_to` and no `valid_from`, "Dana left Acme in March
  2024"): in its place among the facts, its subject and object are resolved and the fact of that subject,
  predicate and object or value valid at its `valid_to` is retracted there (`_end`), with the episode as
  provenance; counted in `facts_retracted`, not `facts_asserted`. No such fact refuses it alone as
  `no_current_fact` (`NoCurrentFact`), leaving nothing of it behind; a fact stated by a user or a system is not
  ended by an inferred end (a `temporal_rule` refusal: explicit beats inferred).
- Exclusive displacement (`Retraction.exclusive` True, e.g. a deal's `OWNS_DEAL`): the fact at `position` is
  asserted with its object locked, then the other subjects' facts on that object valid at `r.at` are closed as of
  `r.at`. When the change arrives out of order (a later owner change, or a null, was applied first) the new fact is
  bounded: its `valid_to` is the earliest later change, so it is kept as history and the newer owner stays current.
  A displacement goes with its fact: it is dropped when the write policy refused the fact.
- Idempotence: the driver may run the transaction function again after a transient error; it works on a copy of
  the facts, and a replay finds nothing more to close.
"""
from __future__ import annotations

import dataclasses
import re
from bisect import bisect_left
from dataclasses import dataclass

from graphmem.errors import EmailTaken, InvalidInput, NotFound
from graphmem.ingest import jobs, refusals
from graphmem.ingest.extract_llm import Extracted
from graphmem.ingest.jobs import Claim
from graphmem.ingest.mapping import Partial, Retraction, complete_value
from graphmem.ingest.policy import PolicyRefusal, screen_entities, screen_facts
from graphmem.models import AssertOutcome, EntityRef, FactIn
from graphmem.ontology import Ontology
from graphmem.settings import Settings
from graphmem.store import Database
from graphmem.store import entities as entity_store
from graphmem.store import facts as fact_store
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow


class LeaseLost(Exception):
    """Another worker took the job over (this worker's lease expired); nothing was written."""


class NoCurrentFact(NotFound):
    """An extracted end (`Extracted.ends`: a `valid_to` with no `valid_from`) found no fact of its subject,
    predicate and object or value valid at that time to end; it is refused alone as `no_current_fact` with this
    detail (predicate and date, no values)."""

    refusal = "no_current_fact"


class IncompleteValue(InvalidInput):
    """A partial value (`graphmem.ingest.mapping.Partial`) that cannot be completed from the stored value; the fact
    is refused alone as `incomplete_value` with this detail (fields and predicate, no values)."""

    refusal = "incomplete_value"


@dataclass
class Screened:
    """An extraction after the write policy, ready to apply.

    `facts`: the facts that passed, in record order (the worker may replace them with same-length, same-order
    disambiguated copies). `indexes`: each of `facts`' index among the extractor's output (`Extracted.fact_numbers`:
    what refusals name).
    `entities`: the entity references that passed. `retractions`: (position among `facts`,
    index among the extraction's retractions, retraction), in record order. `refusals`: the extractor's refusals,
    then the refused facts', then the refused entities'.
    """

    facts: list[FactIn]
    entities: list[EntityRef]
    retractions: list[tuple[int, int, Retraction]]
    refusals: list[PolicyRefusal]
    indexes: list[int]


def screen_extraction(x: Extracted, settings: Settings, ontology: Ontology, episode_id: str) -> Screened:
    """Apply the write policy to `x` (`graphmem.ingest.policy`) and place its retractions among the facts that
    passed, keeping record order. An exclusive fact's displacement is dropped when the policy refused the fact."""
    numbers = x.fact_numbers or list(range(len(x.facts)))   # what refusals name each fact by
    ok, refused = screen_facts(x.facts, settings, ontology, prefix="extraction.facts", names=True, numbers=numbers)
    passed = set(ok)
    placed = sorted(((bisect_left(ok, r.position), i, r) for i, r in enumerate(x.retractions)
                     if not r.exclusive or r.position in passed), key=lambda t: (t[0], t[1]))
    entities, bad_entities = screen_entities(x.entities, episode_id, "extraction.entities", settings)
    return Screened(facts=[x.facts[i] for i in ok], entities=entities, retractions=placed,
                    refusals=x.refusals + [r for _, r in refused] + bad_entities, indexes=[numbers[i] for i in ok])


def apply_extraction(db: Database, claim: Claim, x: Extracted, screened: Screened, settings: Settings,
                     ontology: Ontology, *, stats: dict) -> list[AssertOutcome]:
    """Write `screened` (the extraction `x` of `claim.episode`, after `screen_extraction`) in ONE transaction.

    In that transaction: check the claim is still held (`jobs.holds`), resolve (create or enrich) the entities (the
    episode MENTIONS each; facts/create_batch links a fact's subject and object) and the null retractions' targets,
    assert the facts and apply the retractions in record order (facts in chunks of `settings.bulk_batch_size`),
    record the refusals (the screened ones and the facts the core rejected: self-references, temporal rules), and
    finish the job "done" with `x.notes` as its reason, `x.usage`, and `stats` (its `facts_asserted` /
    `facts_refused`, when given, moved by the refusals below and the core's rejections) plus `facts_retracted`
    (the facts closed) when `x` has retractions.

    A fact that entity resolution or assertion refuses (`InvalidInput`/`NotFound` naming `extraction.facts[i]`: a
    related record named by an id no entity has, an email that belongs to an entity of another kind, identifiers
    naming two entities) is refused alone (`_refuse_alone`): the transaction is rolled back, the fact is taken out
    of `screened` with an `unknown_entity` or `invalid_reference` refusal, and the rest is written again. A mapped
    record's own entity (`extraction.entities[i]`) that cannot be resolved fails the job instead (the change cannot
    apply; a retry can, once its record is stored).

    Returns one `AssertOutcome` per fact of `screened.facts` (as it is at the end), in order. Raises `LeaseLost`
    (another worker holds the job; nothing written), `jobs.PastRetention` (the episode passed retention since the
    claim; nothing written, the job left running for the caller to end), `InvalidInput`/`NotFound` from resolving a
    mapped record's own entity or a retraction's target (nothing written), or the driver's errors once its retries
    are exhausted. See the module docstring for the rules.
    """
    stats = dict(stats)
    while True:
        try:
            return db.write(lambda tx: _write(tx, claim, x, screened, settings, ontology, stats))
        except EmailTaken as exc:
            if not _drop_email(screened, exc, claim.episode.id):
                raise
        except (InvalidInput, NotFound) as exc:
            if not _refuse_alone(screened, exc, claim.episode.id):
                raise
            if "facts_asserted" in stats:
                stats["facts_asserted"] -= 1
                stats["facts_refused"] = stats.get("facts_refused", 0) + 1


def _write(tx: Tx, claim: Claim, x: Extracted, screened: Screened, settings: Settings, ontology: Ontology,
           stats: dict) -> list[AssertOutcome]:
    """`apply_extraction`'s transaction function. It changes none of its arguments: the driver may run it again
    after a transient error."""
    tenant, gone, indexes = claim.tenant_id, screened.retractions, screened.indexes
    if not jobs.holds(tx, claim):
        raise LeaseLost()
    if screened.entities:
        briefs = entity_store.resolve(tx, tenant, screened.entities, settings,
                                      [f"extraction.entities[{i}]" for i in range(len(screened.entities))],
                                      namesakes="owner", episodes=[claim.episode.id] * len(screened.entities))
        tx.run("episodes/mention", tenant_id=tenant, episode_id=claim.episode.id,
               entity_ids=list(dict.fromkeys(b.id for b in briefs)), now=utcnow())
    plain = [(k, i, r) for k, (_, i, r) in enumerate(gone) if not r.exclusive]
    targets: dict[int, str] = {}
    if plain:
        briefs = entity_store.resolve(tx, tenant, [r.subject or r.object for _, _, r in plain],
                                      settings, [f"extraction.retractions[{i}]" for _, i, _ in plain],
                                      namesakes="owner", episodes=[r.episode_id for _, _, r in plain])
        targets = {k: b.id for (k, _, _), b in zip(plain, briefs)}
    todo = list(screened.facts)      # a copy: `_exclusive` names an exclusive fact's entities by id
    outcomes: list[AssertOutcome] = []
    retracted, done_upto = 0, 0
    for k, (pos, _, r) in enumerate(gone):
        outcomes += _assert(tx, tenant, todo, indexes, done_upto, pos, ontology, settings, x.partials, x.ends)
        done_upto = pos
        if not r.exclusive:
            p = ontology.predicates.get(r.predicate)
            retracted += len(_retract(tx, tenant, r, targets[k], ontology, settings, p is not None and p.symmetric))
            continue
        # an exclusive fact (a deal's new owner): fit it among the object's other subjects, assert it,
        # then close the subjects it displaces
        todo[pos], displaced = _exclusive(tx, tenant, r, todo[pos], indexes[pos], settings)
        outcomes += _assert(tx, tenant, todo, indexes, pos, pos + 1, ontology, settings, x.partials, x.ends)
        done_upto = pos + 1
        if outcomes[-1].action != "rejected":   # a refused owner displaces nobody
            retracted += len(_displace(tx, tenant, r, todo[pos].object.id, displaced, ontology, settings))
    outcomes += _assert(tx, tenant, todo, indexes, done_upto, len(todo), ontology, settings, x.partials, x.ends)
    core = [_core_refusal(indexes[k], f, o) for k, (f, o) in enumerate(zip(todo, outcomes))
            if o.action == "rejected"]
    refusals.record_tx(tx, tenant, screened.refusals + core)
    done_stats = dict(stats)
    if core and "facts_asserted" in done_stats:
        done_stats["facts_asserted"] -= len(core)
        done_stats["facts_refused"] = done_stats.get("facts_refused", 0) + len(core)
    ended = [o for k, o in enumerate(outcomes)   # ends count as retractions (a rejected one as a refusal)
             if indexes[k] in x.ends and o.action != "rejected"]
    if ended and "facts_asserted" in done_stats:
        done_stats["facts_asserted"] -= len(ended)
    if x.retractions or ended:
        done_stats["facts_retracted"] = retracted + len(ended)
    jobs.finish(tx, claim, "done", reason="; ".join(x.notes)[:1000] or None, usage=x.usage, stats=done_stats)
    return outcomes


def _assert(tx: Tx, tenant: str, todo: list[FactIn], indexes: list[int], start: int, end: int,
            ontology: Ontology, settings: Settings, partials: dict[int, Partial] | None = None,
            ends: set[int] = frozenset()) -> list[AssertOutcome]:
    """Assert `todo[start:end]` (a slice of the job's facts, named in errors by `indexes`) in chunks of
    `bulk_batch_size`; one `AssertOutcome` per fact (a self-reference comes back rejected, `_self_reference`). A
    fact with a partial value (`partials`, by its index) is completed (`_complete`, `todo` updated in place) once the
    facts before it are asserted, so it reads what they wrote. A fact in `ends` (by its index) is not asserted: it
    ends the stored fact (`_end`), in its place among the others."""
    out: list[AssertOutcome] = []
    partials = partials or {}
    i = start
    while i < end:
        if indexes[i] in ends:
            out.append(_end(tx, tenant, todo[i], indexes[i], ontology, settings))
            i += 1
            continue
        if indexes[i] in partials:
            todo[i] = _complete(tx, tenant, todo[i], partials[indexes[i]], indexes[i], settings)
            j = i + 1
        else:
            j = min(i + settings.bulk_batch_size, end)
            j = next((k for k in range(i, j) if indexes[k] in partials or indexes[k] in ends), j)
        out += fact_store.assert_batch(tx, tenant, todo[i:j], ontology, settings, refuse_self_reference=True,
                                       fields=[f"extraction.facts[{indexes[k]}]" for k in range(i, j)])
        i = j
    return out


def _end(tx: Tx, tenant: str, fact: FactIn, index: int, ontology: Ontology, settings: Settings) -> AssertOutcome:
    """Apply an extracted end (`Extracted.ends`: "Dana left Acme in March 2024", a `valid_to` and no `valid_from`):
    resolve its subject and object, then retract the `fact.predicate` fact of that subject with that object or
    value valid at `fact.valid_to` (`graphmem.store.facts.retract`: closed there with status "retracted", the episode
    as provenance with role retraction and the fact's source; a symmetric predicate's pair both ways). Returns a
    "retracted" outcome naming the closed fact, or a "rejected" one (a `temporal_rule` refusal) when that fact's
    source ranks above the end's (`graphmem.temporal.SOURCE_RANK`: an inferred end does not close what a user or a
    system stated), judged by `retract` under the subjects' locks (`keep_stronger`), so a user's restatement
    committed while this transaction ran counts. Raises `NoCurrentFact` (field `extraction.facts[index]`) when no such
    fact is valid then, and `InvalidInput`/`NotFound` from entity resolution: either refuses this end alone (the
    transaction runs again without it, so nothing of it stays, not even its entities)."""
    field = f"extraction.facts[{index}]"
    p = ontology.get(fact.predicate)
    refs = [fact.subject] + ([fact.object] if fact.object is not None else [])
    briefs = entity_store.resolve(tx, tenant, refs, settings, [f"{field}.subject", f"{field}.object"][:len(refs)],
                                  namesakes="owner", episodes=[fact.episode_id] * len(refs))
    key = f"e:{briefs[1].id}" if fact.object is not None else f"v:{fact_store.value_key(fact.value)}"
    try:
        closed = fact_store.retract(tx, tenant, briefs[0].id, p.name, fact.valid_to, fact.episode_id, key,
                                    source=fact.source, symmetric=p.symmetric, keep_stronger=True,
                                    ontology=ontology, settings=settings)
    except fact_store.Outranked as held:
        # explicit beats inferred (DESIGN.md, "Temporal rules"): an inferred end does not close what a user or a
        # system stated; decided under the subjects' locks, which a restatement of the fact also takes
        return AssertOutcome(action="rejected", fact_id=held.fact_id,
                             reason=f"an inferred end may not end a {held.source} fact ({held.fact_id})")
    except NotFound:
        raise NoCurrentFact(f"no {p.name} fact of this subject with this {'object' if fact.object else 'value'} is "
                            f"valid at {fact.valid_to.isoformat()} to end", field=field) from None
    return AssertOutcome(action="retracted", fact_id=closed[0], closed_fact_id=closed[0])


def _complete(tx: Tx, tenant: str, fact: FactIn, partial: Partial, index: int, settings: Settings) -> FactIn:
    """`fact` (a mapped fact whose value the record gives only part of: `partial`) with its value completed from
    the `fact.predicate` value its subject holds at `fact.valid_from`, and its subject named by id. Locks the subject
    first (facts/lock_subjects), so concurrent changes of one value complete one after the other. Raises
    `IncompleteValue` (field `extraction.facts[index].value`) when it cannot be completed: see the module docstring."""
    field = f"extraction.facts[{index}].value"
    p, at = fact.predicate.strip().upper(), fact.valid_from
    given = ", ".join(partial.given) or "none of its fields"
    missing = ", ".join(partial.missing)
    if partial.cleared:
        raise IncompleteValue(f"the record sets {', '.join(partial.cleared)} to null, which does not clear {p} "
                              f"(template {partial.template!r}); it gives {given}", field=field)
    [subject] = entity_store.resolve(tx, tenant, [fact.subject], settings, [f"extraction.facts[{index}].subject"],
                                     namesakes="owner", episodes=[fact.episode_id])
    tx.rows("facts/lock_subjects", tenant_id=tenant, ids=[subject.id])
    held = [f for f in fact_store.about(tx, tenant, subject.id, include_superseded=True, predicates=[p])
            if f.subject_id == subject.id and f.value is not None]
    if any(f.valid_from > at for f in held):
        raise IncompleteValue(f"the record changes {given} of {p} but not {missing}, and a later change of {p} is "
                              f"already stored (it may have taken {missing} from the value this change replaces): "
                              "send every field of the value", field=field)
    then = [f for f in held if f.valid_from <= at and (f.valid_to is None or f.valid_to > at)]
    if not then:
        raise IncompleteValue(f"the record changes {given} of {p} but not {missing}, and no {p} value is stored for "
                              f"the entity at the change to take {missing} from: send every field of the value",
                              field=field)
    values = {complete_value(partial, f.value) for f in then}
    if None in values or len(values) != 1:
        raise IncompleteValue(f"the record changes {given} of {p} but not {missing}, and the stored {p} value does "
                              f"not read as {partial.template!r} in one way: send every field of the value",
                              field=field)
    return fact.model_copy(update={"subject": EntityRef(id=subject.id), "value": values.pop()})


_FACT = re.compile(r"extraction\.facts\[(\d+)\]")
_DETAIL = {
    "unknown_entity": "the entity is named by identifiers that no stored entity has; a new entity needs a kind and "
                      "a name",
    "invalid_reference": "entity resolution refused the reference: its kind differs from the identified entity's, "
                         "or its identifiers name different entities",
}


def _refuse_alone(screened: Screened, exc: InvalidInput | NotFound, episode_id: str) -> bool:
    """Take the fact that `exc.field` names (`extraction.facts[i]...`, i the extractor's number) out of `screened`,
    with its refusal: `unknown_entity` for `NotFound`, `invalid_reference` for `InvalidInput`, on the exception's
    field; the detail names the rule, not the refused content. The fact's retractions move with it: an exclusive
    fact's displacement is dropped, a null retraction placed after it moves up one place. Returns False when `exc`
    names no fact of `screened`."""
    m = _FACT.match(exc.field or "")
    if m is None or int(m.group(1)) not in screened.indexes:
        return False
    k = screened.indexes.index(int(m.group(1)))
    fact = screened.facts.pop(k)
    screened.indexes.pop(k)
    screened.retractions = [(pos - (pos > k), i, r) for pos, i, r in screened.retractions
                            if not (r.exclusive and pos == k)]
    code = getattr(exc, "refusal", None) or ("unknown_entity" if isinstance(exc, NotFound) else "invalid_reference")
    # its detail names fields (or a predicate and a date) only
    detail = exc.detail if isinstance(exc, (IncompleteValue, NoCurrentFact)) else _DETAIL[code]
    screened.refusals.append(PolicyRefusal(code, exc.field, detail, episode_id, fact.predicate))
    return True


def _drop_email(screened: Screened, exc: EmailTaken, episode_id: str) -> bool:
    """Take the email `exc` names out of every reference of `screened` that gives it with the same external ids
    (the record's own entity and the facts and retractions naming it), with an `email_taken` refusal on
    `exc.field` (its detail names the rule, not the address). Returns False when no reference gives it."""
    def strip(ref):
        if (isinstance(ref, EntityRef) and ref.email == exc.email
                and tuple(ref.external_ids) == exc.external_ids):
            return ref.model_copy(update={"email": None})
        return ref

    before = (screened.entities, screened.facts, screened.retractions)
    screened.entities = [strip(e) for e in screened.entities]
    screened.facts = [f.model_copy(update={"subject": strip(f.subject), "object": strip(f.object)})
                      for f in screened.facts]
    screened.retractions = [(pos, i, dataclasses.replace(r, subject=strip(r.subject), object=strip(r.object)))
                            for pos, i, r in screened.retractions]
    if (screened.entities, screened.facts, screened.retractions) == before:
        return False
    screened.refusals.append(PolicyRefusal(
        "email_taken", exc.field or "extraction.entities", "the email belongs to another entity: the entity the "
        "external id names keeps its email, and the two are not merged", episode_id, None))
    return True


def _core_refusal(index: int, fact: FactIn, outcome: AssertOutcome) -> PolicyRefusal:
    """The refusal record of a fact the core rejected (`outcome.action` "rejected"): `self_reference` (subject
    and object are one entity), or `temporal_rule` with the rule's reason (an inferred fact may not supersede a
    stated or system one, nor one inferred with higher confidence; `graphmem.temporal.may_supersede`)."""
    if _self_reference(outcome):
        return PolicyRefusal("self_reference", f"extraction.facts[{index}].object",
                             "the fact's subject and object are the same entity", fact.episode_id, fact.predicate)
    return PolicyRefusal("temporal_rule", f"extraction.facts[{index}]", outcome.reason or "rejected by the temporal "
                         "rules", fact.episode_id, fact.predicate)


def _self_reference(outcome: AssertOutcome) -> bool:
    """Whether the core refused the fact because its subject and object are one entity."""
    return outcome.action == "rejected" and outcome.reason == fact_store.SELF_REFERENCE


def _retract(tx: Tx, tenant: str, r: Retraction, entity_id: str, ontology: Ontology, settings: Settings,
             symmetric: bool = False) -> list[str]:
    """Apply one null retraction; returns the closed fact ids (none when nothing was valid at `r.at`).
    `symmetric`: `r.predicate` holds both ways, so the facts stored the other way round are closed too; a null
    field naming the subject of such a fact ("who knows this contact": null) closes every fact of the predicate about
    the entity, whichever way round each was stored ("Frank knows Zoe" is "Zoe knows Frank").
    The clear itself is recorded first, under the entity's lock (`graphmem.store.facts.record_clear`), also when
    nothing is valid to close: a value older than `r.at` that arrives (or commits) later ends at `r.at` too."""
    side = "subject" if r.subject is not None or symmetric else "object"
    fact_store.record_clear(tx, tenant, entity_id, r.predicate, r.at, r.episode_id, side)
    if side == "subject":
        pairs: list[tuple[str, str | None]] = [(entity_id, None)]
    else:   # the nulled field named the subject: close the facts of r.predicate pointing at the entity
        about = fact_store.about_all(tx, tenant, entity_id, r.at, r.predicate)
        pairs = sorted({(f.subject_id, f"e:{entity_id}") for f in about if f.object_id == entity_id})
    return _close(tx, tenant, r, pairs, ontology, settings, symmetric)


def _exclusive(tx: Tx, tenant: str, r: Retraction, fact: FactIn, index: int,
               settings: Settings) -> tuple[FactIn, list[str]]:
    """Prepare an "exclusive" mapped fact (e.g. a deal's new owner, valid from `r.at`) before it is asserted.

    Resolves its subject and object (the fact comes back naming both by id, so the assertion writes exactly
    what was examined), locks the object (concurrent owner changes of one deal apply one after the other) and
    reads the object's `r.predicate` facts of every subject and time. Returns the fact to assert and the ids of
    the other subjects whose fact is valid at `r.at` (to close at `r.at` once it is asserted). When the change
    arrived out of order, i.e. a fact on the object starts after `r.at` or a displaced one ended after it (a
    later owner change, or a null, that was processed first, also a null that found no owner to close: a
    recorded clear, `graphmem.store.facts.clears`), the returned fact is given `valid_to` = the earliest such
    time: it is stored as history, closed where the later change begins, and the later owner stays current.
    Raises `InvalidInput`/`NotFound` from entity resolution (as the assertion would)."""
    owner, target = entity_store.resolve(tx, tenant, [fact.subject, fact.object], settings,
                                         [f"extraction.facts[{index}].subject", f"extraction.facts[{index}].object"],
                                         namesakes="owner", episodes=[fact.episode_id, fact.episode_id])
    tx.rows("facts/lock_subjects", tenant_id=tenant, ids=[target.id])
    on_target = [f for f in fact_store.about(tx, tenant, target.id, include_superseded=True,
                                             predicates=[r.predicate]) if f.object_id == target.id]
    valid_then = [f for f in on_target if f.subject_id != owner.id and f.valid_from <= r.at
                  and (f.valid_to is None or f.valid_to > r.at)]
    later = [f.valid_from for f in on_target if f.valid_from > r.at] + \
            [f.valid_to for f in valid_then if f.valid_to is not None] + \
            [at for at in fact_store.clears(tx, tenant, target.id, r.predicate, side="object") if at > r.at]
    update: dict = {"subject": EntityRef(id=owner.id), "object": EntityRef(id=target.id)}
    if later and (fact.valid_to is None or fact.valid_to > min(later)):
        update["valid_to"] = min(later)
    return fact.model_copy(update=update), sorted({f.subject_id for f in valid_then})


def _displace(tx: Tx, tenant: str, r: Retraction, object_id: str, subject_ids: list[str], ontology: Ontology,
              settings: Settings) -> list[str]:
    """Close, as of `r.at`, the `r.predicate` facts of `subject_ids` on `object_id` (the subjects an exclusive
    fact displaced). A replay finds nothing valid to close (a no-op). Returns the closed fact ids."""
    return _close(tx, tenant, r, [(subject_id, f"e:{object_id}") for subject_id in subject_ids], ontology, settings)


def _close(tx: Tx, tenant: str, r: Retraction, pairs: list[tuple[str, str | None]], ontology: Ontology,
           settings: Settings, symmetric: bool = False) -> list[str]:
    """Retract, for each (subject id, object key or None), its `r.predicate` facts valid at `r.at` through
    `graphmem.store.facts.retract` (with the tenant's `ontology` and `settings`, which a value said again after
    `r.at` is asserted with): status "retracted", valid_to = `r.at`, `r.episode_id` as provenance, source
    "system"; `symmetric` as for that function. A pair with nothing to close is skipped. Returns the closed fact
    ids."""
    closed: list[str] = []
    for subject_id, object_key in pairs:
        try:
            closed += fact_store.retract(tx, tenant, subject_id, r.predicate, r.at, r.episode_id, object_key,
                                         source="system", symmetric=symmetric, ontology=ontology, settings=settings)
        except NotFound:
            pass
    return closed
