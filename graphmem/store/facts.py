"""Fact assertion (single and bulk share one path), retraction, correction and reads.

One call to `assert_batch` is one transaction: validate everything, resolve entities, lock the subjects (in id
order), read their timelines, apply `graphmem.temporal.decide` to each assertion in order (later assertions see
earlier ones), then write with a fixed number of UNWIND queries whatever the batch size. Any error rolls the
whole batch back: nothing is half-written.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime

from graphmem.errors import InvalidInput, NotFound
from graphmem.models import AssertOutcome, Fact, FactIn, Provenance, new_id, value_key
from graphmem.ontology import Ontology
from graphmem.settings import Settings
from graphmem.store import entities
from graphmem.store.db import Tx, tenant_token
from graphmem.temporal import Assertion, Decision, TimelineFact, decide
from graphmem.timeutil import utcnow


def _fact(row: dict) -> Fact:
    return Fact(**row["fact"])


def assert_batch(tx: Tx, tenant_id: str, facts: Sequence[FactIn], ontology: Ontology, settings: Settings,
                 field_prefix: str = "facts") -> list[AssertOutcome]:
    """Assert `facts` (each with an `episode_id`) under the temporal rules; one `AssertOutcome` per fact.

    Raises `InvalidInput` (unknown predicate, wrong kinds, oversized values, missing episode_id) or `NotFound`
    (unknown entity or episode id) naming the field, before anything is written.
    """
    now = utcnow()
    fields = [f"{field_prefix}[{i}]" for i in range(len(facts))]
    preds = []
    for f, fld in zip(facts, fields):
        p = ontology.get(f.predicate, field=f"{fld}.predicate")
        if f.episode_id is None:
            raise InvalidInput(f"{fld}.episode_id: every fact needs the episode it came from", field=f"{fld}.episode_id")
        for name, text in (("value", f.value), ("statement", f.statement)):
            if text is not None and len(text) > settings.max_value_chars:
                raise InvalidInput(f"{fld}.{name} is {len(text)} characters; the limit is {settings.max_value_chars}",
                                   field=f"{fld}.{name}")
        preds.append(p)

    episode_times = {r["id"]: r["occurred_at"].to_native() for r in
                     tx.rows("episodes/get_many", tenant_id=tenant_id, ids=list({f.episode_id for f in facts}))}
    for f, fld in zip(facts, fields):
        if f.episode_id not in episode_times:
            raise NotFound(f"{fld}.episode_id: no episode {f.episode_id!r}", field=f"{fld}.episode_id")

    refs, ref_fields, slots = [], [], []
    for f, fld in zip(facts, fields):
        slots.append(len(refs)); refs.append(f.subject); ref_fields.append(f"{fld}.subject")
        if f.object is not None:
            refs.append(f.object); ref_fields.append(f"{fld}.object")
    resolved = entities.resolve(tx, tenant_id, refs, settings, ref_fields)

    rows = []
    for i, (f, p, fld) in enumerate(zip(facts, preds, fields)):
        subj = resolved[slots[i]]
        obj = resolved[slots[i] + 1] if f.object is not None else None
        if not p.accepts_subject(subj.kind):
            raise InvalidInput(f"{fld}.subject: {p.name} takes a subject of kind {p.subject_kinds}, not {subj.kind}",
                               field=f"{fld}.subject.kind")
        if not p.accepts_object(obj.kind if obj else None):
            got = obj.kind if obj else "a literal value"
            raise InvalidInput(f"{fld}.object: {p.name} takes {p.object_kinds}, not {got}", field=f"{fld}.object")
        valid_from = f.valid_from or episode_times[f.episode_id]
        if f.valid_to is not None and f.valid_to <= valid_from:
            raise InvalidInput(f"{fld}.valid_to must be after valid_from", field=f"{fld}.valid_to")
        rows.append((f, p, subj, obj, valid_from))

    subject_ids = sorted({r[2].id for r in rows})
    tx.rows("facts/lock_subjects", tenant_id=tenant_id, ids=subject_ids)
    pairs = sorted({(r[2].id, r[1].name) for r in rows})
    timelines: dict[tuple[str, str], list[TimelineFact]] = defaultdict(list)
    links: set[tuple[str, str]] = set()
    for t in tx.rows("facts/timelines", tenant_id=tenant_id,
                     pairs=[{"subject_id": s, "predicate": p} for s, p in pairs]):
        timelines[(t["subject_id"], t["predicate"])].append(TimelineFact(
            t["id"], t["object_key"], t["valid_from"].to_native(),
            t["valid_to"].to_native() if t["valid_to"] else None, t["confidence"], t["source"], t["status"]))
        links.update((t["id"], older) for older in t["supersedes"])

    creates, provenance, closes, link_rows, unlink_rows, outcomes = [], [], {}, [], [], []
    token = tenant_token(tenant_id)
    for f, p, subj, obj, valid_from in rows:
        okey = f"e:{obj.id}" if obj else f"v:{value_key(f.value)}"
        new = Assertion(new_id(), okey, valid_from, f.valid_to, f.confidence, f.source)
        if p.sensitivity != "none" and f.source == "inferred":
            d = Decision("candidate", fact_id=new.id, valid_to=f.valid_to)
        else:
            d = decide(timelines[(subj.id, p.name)], new, p.single_valued, links)
        outcomes.append(AssertOutcome(action=d.action, fact_id=d.fact_id, reason=d.reason,
                                      closed_fact_id=d.closes[0][0] if d.closes else None))
        if d.action == "rejected":
            continue
        if d.action == "duplicate":
            ttl = ontology.ttl(p)
            provenance.append({"fact_id": d.fact_id, "episode_id": f.episode_id, "confidence": f.confidence,
                               "source": f.source, "role": "assertion", "retain_until": now + ttl if ttl else None})
            continue
        statement = f.statement or p.statement(subj.name, obj.name if obj else f.value)
        status = "candidate" if d.action == "candidate" else ("current" if d.valid_to is None else "closed")
        creates.append({"subject_id": subj.id, "object_id": obj.id if obj else None, "episode_id": f.episode_id,
                        "role": "assertion", "props": {
                            "id": new.id, "tenant_id": tenant_id, "tenant_token": token, "predicate": p.name, "value": f.value, "object_key": okey,
                            "statement": statement, "valid_from": valid_from, "valid_to": d.valid_to,
                            "recorded_at": now, "closed_at": now if d.valid_to else None, "last_confirmed_at": now,
                            "confidence": f.confidence, "source": f.source, "fact_class": p.fact_class,
                            "status": status, "retain_until": now + ttl if (ttl := ontology.ttl(p)) else None}})
        if d.action == "candidate":
            continue
        timeline = timelines[(subj.id, p.name)]
        for fid, vt in d.closes:
            closes[fid] = {"id": fid, "valid_to": vt, "status": "closed"}
            for tf in timeline:
                if tf.id == fid:
                    tf.valid_to, tf.status = vt, "closed"
        timeline.append(TimelineFact(new.id, okey, valid_from, d.valid_to, f.confidence, f.source, status))
        link_rows += [{"newer": n, "older": o} for n, o in d.supersedes]
        unlink_rows += [{"newer": n, "older": o} for n, o in d.unlinks]
        links.update(d.supersedes)
        links.difference_update(d.unlinks)

    if creates:
        tx.run("facts/create_batch", tenant_id=tenant_id, rows=creates)
    if closes:
        tx.run("facts/close_batch", tenant_id=tenant_id, now=now, rows=list(closes.values()))
    if unlink_rows:
        tx.run("facts/unlink_supersedes", tenant_id=tenant_id, rows=unlink_rows)
    if link_rows:
        tx.run("facts/link_supersedes", tenant_id=tenant_id, now=now, rows=link_rows)
    if provenance:
        tx.run("facts/add_provenance", tenant_id=tenant_id, now=now, rows=provenance)
    return outcomes


def retract(tx: Tx, tenant_id: str, subject_id: str, predicate: str, at: datetime, episode_id: str,
            object_key: str | None = None, source: str = "user_explicit") -> list[str]:
    """Close the facts of (subject, predicate[, object]) valid at `at`, with status `retracted` and the episode as
    provenance (role `retraction`). Nothing is deleted. Returns the closed fact ids; `NotFound` if none was valid."""
    tx.rows("facts/lock_subjects", tenant_id=tenant_id, ids=[subject_id])
    rows = tx.rows("facts/timelines", tenant_id=tenant_id, pairs=[{"subject_id": subject_id, "predicate": predicate}])
    hit = [r["id"] for r in rows
           if (object_key is None or r["object_key"] == object_key) and r["valid_from"].to_native() <= at
           and (r["valid_to"] is None or r["valid_to"].to_native() > at)]
    if not hit:
        raise NotFound(f"no {predicate} fact valid at {at.isoformat()} to retract", field="predicate")
    now = utcnow()
    tx.run("facts/close_batch", tenant_id=tenant_id, now=now,
           rows=[{"id": fid, "valid_to": at, "status": "retracted"} for fid in hit])
    tx.run("facts/add_provenance", tenant_id=tenant_id, now=now, rows=[
        {"fact_id": fid, "episode_id": episode_id, "confidence": 1.0, "source": source, "role": "retraction"}
        for fid in hit])
    return hit


def get(tx: Tx, tenant_id: str, fact_id: str) -> Fact:
    """The fact `fact_id` of this tenant; `NotFound` otherwise."""
    row = tx.one("facts/get", tenant_id=tenant_id, id=fact_id, now=utcnow())
    if row is None:
        raise NotFound(f"no fact {fact_id!r}", field="fact_id")
    return _fact(row)


def about(tx: Tx, tenant_id: str, entity_id: str, *, as_of: datetime | None = None,
          known_at: datetime | None = None, include_superseded: bool = False,
          predicates: list[str] | None = None, limit: int = 1000) -> list[Fact]:
    """Facts where the entity is subject or object, valid at `as_of` and believed at `known_at` (both default now)."""
    now = utcnow()
    return [_fact(r) for r in tx.rows("facts/about_entity", tenant_id=tenant_id, entity_id=entity_id,
                                      as_of=as_of or now, known_at=known_at or now, now=now,
                                      include_superseded=include_superseded, predicates=predicates, limit=limit)]


def history(tx: Tx, tenant_id: str, fact_id: str, ontology: Ontology) -> list[Fact]:
    """The supersession timeline `fact_id` belongs to, oldest `valid_from` first (corrections included)."""
    fact = get(tx, tenant_id, fact_id)
    single = ontology.predicates[fact.predicate].single_valued if fact.predicate in ontology.predicates else False
    return [_fact(r) for r in tx.rows("facts/history", tenant_id=tenant_id, id=fact_id, single_valued=single,
                                      now=utcnow())]


def provenance(tx: Tx, tenant_id: str, fact_id: str) -> list[Provenance]:
    """The episodes behind `fact_id` (`NotFound` if the fact is not in this tenant)."""
    get(tx, tenant_id, fact_id)
    return [Provenance(**r) for r in tx.rows("facts/provenance", tenant_id=tenant_id, id=fact_id, now=utcnow())]
