"""Entity resolution and reads.

`resolve` turns `EntityRef`s into stored entities, in one round of batched queries:
1. an `id` must name an entity of this tenant (else `NotFound`);
2. strong identifiers: email, then external ids, then domain;
3. the normalised name or an alias within the kind (an `Alias` node per tenant and key), unless the named
   entity carries a different email or domain than the reference (then it is somebody else);
4. otherwise a new entity. New entities claim their name alias with MERGE on a unique key, so two writers
   resolving the same new name at once end up with one entity.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from graphmem.errors import InvalidInput, NotFound
from graphmem.models import Entity, EntityRef, name_key, new_id
from graphmem.settings import Settings
from graphmem.store.db import Tx, tenant_token
from graphmem.timeutil import utcnow


def alias_key(kind: str, key: str) -> str:
    """The tenant-unique alias key: kind + ":" + normalised name."""
    return f"{kind}:{key}"


def _check_ref(ref: EntityRef, field: str, settings: Settings) -> None:
    for n in [ref.name or "", *ref.aliases]:
        if len(n) > settings.max_name_chars:
            raise InvalidInput(f"{field}: names are limited to {settings.max_name_chars} characters", field=field)
        if ref.name is not None and not name_key(n):
            raise InvalidInput(f"{field}: name {n!r} has no letters or digits", field=field)


class EntityBrief(NamedTuple):
    """What assertion needs of a resolved entity."""

    id: str
    kind: str
    name: str


def _ref_key(ref: EntityRef) -> tuple:
    return (ref.id, ref.kind, name_key(ref.name) if ref.name else None, ref.email, ref.domain,
            tuple(ref.external_ids), tuple(ref.aliases), ref.summary)


def resolve(tx: Tx, tenant_id: str, refs: Sequence[EntityRef], settings: Settings,
            fields: Sequence[str] | None = None) -> list[EntityBrief]:
    """Resolve (and create or enrich) entities for `refs`; returns one `EntityBrief` per ref, in order.

    `fields` names each ref's place in the request (for error messages). Raises `NotFound` for an unknown id,
    `InvalidInput` for over-long or empty names. Runs inside the caller's write transaction; identical refs are
    resolved once, so a bulk batch costs a fixed number of queries (at most four) whatever its size.
    """
    fields = list(fields or [f"entities[{i}]" for i in range(len(refs))])
    for ref, f in zip(refs, fields):
        _check_ref(ref, f, settings)
    first: dict[tuple, int] = {}
    slot = [first.setdefault(_ref_key(r), i) for i, r in enumerate(refs)]
    unique = sorted(set(slot))
    now = utcnow()
    known: dict[str, dict] = {}      # entity id -> brief map
    resolved: dict[int, str] = {}

    by_id = [i for i in unique if refs[i].id]
    if by_id:
        known.update({r["entity"]["id"]: r["entity"] for r in
                      tx.rows("entities/brief_many", tenant_id=tenant_id, ids=[refs[i].id for i in by_id])})
        for i in by_id:
            if refs[i].id not in known:
                raise NotFound(f"{fields[i]}: no entity {refs[i].id!r}", field=f"{fields[i]}.id")
            resolved[i] = refs[i].id

    by_ref = [i for i in unique if not refs[i].id]
    if by_ref:
        rows = tx.rows("entities/resolve_batch", tenant_id=tenant_id, refs=[
            {"idx": i, "email": refs[i].email, "domain": refs[i].domain,
             "external_keys": refs[i].external_ids, "alias_key": alias_key(refs[i].kind, name_key(refs[i].name))}
            for i in by_ref])
        to_create: dict[str, dict] = {}   # dedupe new entities within the batch by identifier / alias key
        pending: dict[int, str] = {}
        for row in rows:
            i, ref, named = row["idx"], refs[row["idx"]], row["by_name"]
            match = row["by_email"] or row["by_external"] or row["by_domain"]
            if match is None and named:
                conflict = ((ref.email and named["email"] and ref.email != named["email"]) or
                            (ref.domain and named["domain"] and ref.domain != named["domain"]))
                if not conflict:
                    match = named
            if match:
                resolved[i] = match["id"]
                known[match["id"]] = match
                continue
            key = alias_key(ref.kind, name_key(ref.name))
            dedupe = ref.email or ref.domain or key
            if dedupe not in to_create:
                to_create[dedupe] = {"id": new_id(), "kind": ref.kind, "name": ref.name, "name_key": name_key(ref.name),
                                     "alias_key": key, "claim_alias": named is None, "email": ref.email,
                                     "domain": ref.domain, "summary": ref.summary, "search_text": ref.name}
            pending[i] = to_create[dedupe]["id"]
        if to_create:
            owners = {r["requested_id"]: r["id"] for r in
                      tx.rows("entities/create_batch", tenant_id=tenant_id, tenant_token=tenant_token(tenant_id),
                              now=now, rows=list(to_create.values()))}
            lost = [rid for rid, owner in owners.items() if owner != rid]   # another writer created it first
            if lost:
                known.update({r["entity"]["id"]: r["entity"] for r in
                              tx.rows("entities/brief_many", tenant_id=tenant_id, ids=[owners[x] for x in lost])})
            for row in to_create.values():
                if owners[row["id"]] == row["id"]:
                    known[row["id"]] = {**row, "aliases": [], "external_ids": []}
            for i, rid in pending.items():
                resolved[i] = owners[rid]

        enrich: dict[str, dict] = {}
        for i in by_ref:
            ref, ent = refs[i], known[resolved[i]]
            have = {name_key(a) for a in [ent["name"], *ent["aliases"]]}
            aliases = [a for a in [ref.name, *ref.aliases] if name_key(a) and name_key(a) not in have]
            ext = [k for k in ref.external_ids if k not in ent["external_ids"]]
            new_email = ref.email and not ent.get("email")
            new_domain = ref.domain and not ent.get("domain")
            new_summary = ref.summary and ref.summary != ent.get("summary")
            if aliases or ext or new_email or new_domain or new_summary:
                row = enrich.setdefault(resolved[i], {"id": resolved[i], "email": None, "domain": None,
                                                      "summary": None, "external_keys": [], "aliases": []})
                row["email"] = row["email"] or (ref.email if new_email else None)
                row["domain"] = row["domain"] or (ref.domain if new_domain else None)
                row["summary"] = ref.summary if new_summary else row["summary"]
                row["external_keys"] += [k for k in ext if k not in row["external_keys"]]
                row["aliases"] += [{"name": a, "key": alias_key(ref.kind, name_key(a)), "name_key": name_key(a)}
                                   for a in aliases if a not in [x["name"] for x in row["aliases"]]]
        if enrich:
            tx.rows("entities/enrich_batch", tenant_id=tenant_id, now=now, rows=list(enrich.values()))
    briefs = {i: EntityBrief(known[resolved[i]]["id"], known[resolved[i]]["kind"], known[resolved[i]]["name"])
              for i in unique}
    return [briefs[slot[i]] for i in range(len(refs))]


def get(tx: Tx, tenant_id: str, entity_id: str) -> Entity:
    """The entity `entity_id` of this tenant; `NotFound` otherwise (also for another tenant's id)."""
    rows = tx.rows("entities/get_many", tenant_id=tenant_id, ids=[entity_id])
    if not rows:
        raise NotFound(f"no entity {entity_id!r}", field="entity_id")
    return Entity(**rows[0]["entity"])


def find_by_name(tx: Tx, tenant_id: str, name: str, kind: str | None = None, limit: int = 10) -> list[Entity]:
    """Entities whose name or an alias normalises like `name` (optionally of one kind), oldest first."""
    return [Entity(**r["entity"]) for r in tx.rows("entities/find_by_name", tenant_id=tenant_id,
                                                   name_key=name_key(name), kind=kind, limit=limit)]
