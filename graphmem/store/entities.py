"""Entity resolution and reads.

`resolve` turns `EntityRef`s into stored entities, in one round of batched queries (the choice among candidates is
made in `entities/resolve_batch` itself, so only the chosen entity travels back):
1. an `id` must name an entity of this tenant (else `NotFound`);
2. strong identifiers: email, then external ids, then domain (a reference with identifiers but no name must match
   here, else `NotFound`: a new entity needs a kind and a name); an entity of another kind than the reference
   gives is `InvalidInput` naming `<field>.kind`, never merged into. A reference whose external ids name an entity
   and whose email is not that entity's gives it that email (the external system, a CRM, is the source of its own
   record's email: the new address replaces the old one, whose declarations go), unless another entity holds the
   email: `EmailTaken` (409) naming `<field>.email`, nothing moved or merged, or an episode that occurred after the
   reference's declared the current one (a late, older record: `_email_set_later`);
3. the normalised name or an alias within the kind (an `Alias` node per tenant and key), unless the named
   entity carries a different email or domain than the reference (then it is somebody else);
4. otherwise a new entity. New entities claim their name alias with MERGE on a unique key, so two writers
   resolving the same new name at once end up with one entity; one created beside a namesake (told apart by its
   identifiers) locks the name's alias and looks for its identifiers again, so two writers of one new namesake
   end up with one entity too.
"""
from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from functools import lru_cache
from typing import Literal, NamedTuple

from graphmem.errors import EmailTaken, InvalidInput, NotFound
from graphmem.identifiers import name_key as _name_key
from graphmem.models import Entity, EntityRef
from graphmem.settings import Settings
from graphmem.store.db import Tx, tenant_token, whole
from graphmem.store.fulltext import search_terms
from graphmem.timeutil import utcnow


name_key = lru_cache(maxsize=65536)(_name_key)
"""`graphmem.identifiers.name_key`, cached: resolution normalises each name several times and bulk batches repeat names."""


def new_ids(n: int) -> list[str]:
    """`n` new ids in the format of `graphmem.models.new_id` (a random UUID4 as 32 hex digits: version 4, RFC 4122
    variant) from one `os.urandom` call: about 0.6 us an id instead of 5 us for `uuid.uuid4()`."""
    raw = os.urandom(16 * n)
    out = []
    for i in range(0, 16 * n, 16):
        b = bytearray(raw[i:i + 16])
        b[6] = b[6] & 0x0F | 0x40
        b[8] = b[8] & 0x3F | 0x80
        out.append(b.hex())
    return out


def alias_key(kind: str, key: str) -> str:
    """The tenant-unique alias key: kind + ":" + normalised name."""
    return f"{kind}:{key}"


def keyless_name_dropped(ref: EntityRef) -> EntityRef:
    """`ref` without its name when the name has no letter or digit to resolve it by (`name_key` is "": "❤️",
    "...") and an id or a strong identifier names the entity anyway (a CRM record whose name field holds "..."
    still updates its contact); otherwise `ref` itself, whose keyless name `_check_ref` then refuses."""
    if ref.name is not None and not name_key(ref.name) and (ref.id or _identifier_keys(ref)):
        return ref.model_copy(update={"name": None})
    return ref


def _check_ref(ref: EntityRef, field: str, settings: Settings) -> None:
    """`InvalidInput` for a name or alias longer than `settings.max_name_chars`, or with no letter or digit to
    resolve it by (a name when the reference has one; an alias whether or not it has: a reference by id or email
    alone brings its aliases too): a name's names the reference (`field`), an alias's the alias
    (`field.aliases[i]`)."""
    for i, n in enumerate([ref.name or "", *ref.aliases]):
        where, what, plural = (field, "name", "names") if i == 0 else (f"{field}.aliases[{i - 1}]", "alias", "aliases")
        if len(n) > settings.max_name_chars:
            raise InvalidInput(f"{where}: {plural} are limited to {settings.max_name_chars} characters", field=where)
        if (i > 0 or ref.name is not None) and not name_key(n):
            raise InvalidInput(f"{where}: {what} {n!r} has no letters or digits", field=where)


class EntityBrief(NamedTuple):
    """What assertion needs of a resolved entity. `new`: created by this transaction (so it has no facts yet and
    no other transaction can see it)."""

    id: str
    kind: str
    name: str
    new: bool = False


def _ref_key(ref: EntityRef) -> tuple:
    return (ref.id, ref.kind, name_key(ref.name) if ref.name else None, ref.email, ref.domain,
            tuple(ref.external_ids), tuple(ref.aliases), ref.summary)


def _identifier_keys(ref: EntityRef) -> list[tuple[str, str]]:
    """`ref`'s strong identifiers as (kind of identifier, value) pairs."""
    return ([("email", ref.email)] if ref.email else []) + ([("domain", ref.domain)] if ref.domain else []) + \
        [("external", k) for k in ref.external_ids]


def _alias_links(refs: Sequence[EntityRef], rows: Sequence[dict]) -> dict[int, int]:
    """Ref index -> the index of the reference of the batch whose entity it names through an alias the batch gives,
    as separate calls in batch order would resolve it: a reference by name alone (no identifier) that names no
    stored entity, whose name another reference gives as an alias, is that reference's entity (the first such
    reference's, as the first call would have claimed the alias), following chains ("Theodora Quill" aliases
    "Teddy", "Teddy" aliases "T", "T"); of references that name each other the first is the one that creates.
    `rows` are entities/resolve_batch's, one per reference by name or identifiers. A reference without a kind
    declares nothing here (its kind is its entity's, known once resolved)."""
    declared: dict[str, int] = {}
    for row in sorted(rows, key=lambda r: r["idx"]):
        ref = refs[row["idx"]]
        for a in ref.aliases if ref.kind else []:
            key = alias_key(ref.kind, name_key(a))
            if name_key(a) and name_key(a) != name_key(ref.name or ""):
                declared.setdefault(key, row["idx"])
    link = {}
    for row in rows:
        i, ref = row["idx"], refs[row["idx"]]
        if ref.name and not row["match"] and not _identifier_keys(ref):
            j = declared.get(alias_key(ref.kind, name_key(ref.name)))
            if j is not None and j != i:
                link[i] = j
    out = {}
    for i in link:
        path, j = [i], link[i]
        while j in link and j not in path:
            path.append(j)
            j = link[j]
        root = min(path[path.index(j):]) if j in path else j      # a cycle: its first reference creates
        if root != i:
            out[i] = root
    return out


def _identifiers(ref: EntityRef) -> str:
    """The strong identifiers of `ref` as a phrase for messages: "email 'a@b.c', external id 'crm:7'"."""
    return ", ".join(f"{'external id' if kind == 'external' else kind} {value!r}"
                     for kind, value in _identifier_keys(ref))


def id_systems(external_ids: Sequence[str]) -> list[str]:
    """The systems of external ids: each id up to its last ':' ("crm:contact:c10" -> "crm:contact")."""
    return sorted({k.rsplit(":", 1)[0] for k in external_ids if ":" in k})


def _other_person(ref: EntityRef, row: dict) -> bool:
    """True when `ref` and the entity `row` describes carry different emails or different domains (both given), or
    different ids of one external system (two CRM records): the rule by which `entities/resolve_batch` and
    `entities/create_batch` tell a namesake from the named entity."""
    theirs = row.get("external_keys") or []
    return bool((ref.email and row["email"] and ref.email != row["email"])
                or (ref.domain and row["domain"] and ref.domain != row["domain"])
                or (set(id_systems(ref.external_ids)) & set(id_systems(theirs))
                    and not set(ref.external_ids) & set(theirs)))


def _check_identified_kind(ref: EntityRef, entity: dict, field: str) -> None:
    """`InvalidInput` naming `field.kind` when `ref` gives a kind other than that of `entity`, the entity its strong
    identifiers name: such a reference is never merged into an entity of another kind."""
    if ref.kind and ref.kind != entity["kind"]:
        raise InvalidInput(f"{field}.kind: {_identifiers(ref)} names {entity['name']!r} of kind {entity['kind']}, "
                           f"not {ref.kind}", field=f"{field}.kind")


def _check_resolution(ref: EntityRef, row: dict, field: str, namesakes: str) -> None:
    """What `entities/resolve_batch` found for `ref` (`row`) must name one entity: identifiers that name different
    entities are `InvalidInput` naming `field`; with `namesakes` "refuse", a name that several entities answer to,
    given alone or with identifiers that name none of them yet do not set it apart from each of them (another
    email than theirs, another id of an external system they have ids of: it is then somebody else, as beside one
    entity of the name; `row["could_be"]`, over all of them), cannot tell them apart: `InvalidInput` naming
    `field.name`, listing up to five of them."""
    identified = sorted(set(row["identified"]))
    by_external = set(row.get("by_external") or [])
    if (len(identified) > 1 and row.get("by_email") and len(by_external) == 1 and row["by_email"] not in by_external
            and set(identified) - {row["by_email"]} == by_external):
        [owner] = by_external
        raise EmailTaken(f"{field}.email: {ref.email!r} is the email of another entity ({row['by_email']}); the "
                         f"entity that {_identifiers(ref.model_copy(update={'email': None}))} names ({owner}) "
                         "keeps its email, and the two are not merged", field=f"{field}.email", email=ref.email,
                         external_ids=tuple(ref.external_ids))
    if len(identified) > 1:
        raise InvalidInput(f"{field}: {_identifiers(ref)} name {len(identified)} different entities "
                           f"({', '.join(identified)}); they must name one", field=field)
    if row["could_be"] and namesakes == "refuse" and not identified:
        shown = "; ".join(f"{n['kind']} {n['name']!r} (id {n['id']}"
                          + "".join(f", {k} {n[k]}" for k in ("email", "domain") if n.get(k)) + ")"
                          for n in row["namesakes"][:5])
        more = " and more" if len(row["namesakes"]) > 5 else ""
        unknown = f" ({_identifiers(ref)} names none of them)" if _identifier_keys(ref) else ""
        raise InvalidInput(f"{field}.name: {ref.name!r} names more than one entity{unknown}: {shown}{more}; give "
                           "its id, or an email or external id it has", field=f"{field}.name")


def _check_named(ref: EntityRef, entity: dict, field: str) -> None:
    """A kind or name given beside an id is a check, never dropped (as recall's selectors treat them): one the
    entity does not have means the id is not the entity the caller meant. `InvalidInput` naming `field.kind` or
    `field.name` (a name matches the entity's name or one of its aliases, normalised: `name_key`)."""
    if ref.kind and ref.kind != entity["kind"]:
        raise InvalidInput(f"{field}.kind: entity {ref.id!r} is {entity['name']!r} of kind {entity['kind']}, not "
                           f"{ref.kind}", field=f"{field}.kind")
    if ref.name and name_key(ref.name) not in {name_key(n) for n in [entity["name"], *(entity["aliases"] or [])]}:
        raise InvalidInput(f"{field}.name: entity {ref.id!r} is {entity['name']!r}, not {ref.name!r} (nor an alias "
                           "of it)", field=f"{field}.name")


def _replaces_email(ref: EntityRef, ent: dict) -> bool:
    """Whether `ref`, named by one of entity `ent`'s external ids, gives it another email than its own."""
    return bool(not ref.id and ref.email and ent.get("email") and ref.email != ent["email"]
                and set(ref.external_ids) & set(ent["external_ids"]))


def _email_set_later(tx: Tx, tenant_id: str, refs: Sequence[EntityRef], unique: list[int], resolved: dict[int, str],
                     known: dict[str, dict], sources: dict[int, set[str]]) -> set[str]:
    """The ids of the entities whose email an episode declared that occurred after every episode of a reference
    that would replace it (`_replaces_email`): a late, older record keeps the newer email (`entities/email_set_later`).
    A reference without an episode, or an email no episode declared, replaces as before."""
    rows = [{"entity_id": resolved[i], "episode_ids": sorted(sources[i])} for i in unique
            if i in sources and _replaces_email(refs[i], known[resolved[i]])]
    return set(tx.one("entities/email_set_later", tenant_id=tenant_id, rows=rows)["later"]) if rows else set()


def resolve(tx: Tx, tenant_id: str, refs: Sequence[EntityRef], settings: Settings,
            fields: Sequence[str] | None = None, *,
            namesakes: Literal["refuse", "owner"] = "refuse",
            episodes: Sequence[str | None] | None = None, now: datetime | None = None) -> list[EntityBrief]:
    """Resolve (and create or enrich) entities for `refs`; returns one `EntityBrief` per ref, in order.

    `fields` names each ref's place in the request (for error messages). A reference by strong identifiers alone
    may name an entity another reference of the batch creates. Raises `NotFound` for an unknown id or identifiers
    that name no entity (stored or created by the batch), `InvalidInput` for over-long names, names with no letter
    or digit (unless an id or identifier names the entity: `keyless_name_dropped`) or a kind
    other than the kind of the entity an identifier names, or identifiers that name different entities;
    `EmailTaken` for external ids of one entity beside an email another entity holds (step 2 of the module docstring:
    otherwise such an email replaces the entity's). A
    reference by name that several stored entities answer to (namesakes told apart by email, domain or external
    id), alone or with identifiers that name none of them, is, with `namesakes` "refuse" (a caller's write),
    `InvalidInput` naming `<field>.name` and listing them, so the caller names one; with "owner" (extraction,
    CRM mapping) a name alone resolves to the entity that owns the name, and one with such identifiers is a new
    entity beside them.
    `episodes`, when given, names the episode each reference comes from (None: none, as for an entity written
    directly): the episode is recorded as declaring the attributes the reference gives the entity (its name, when the
    reference names it by its own name, aliases, external ids, email, domain and summary, where they are the entity's:
    `entities/declare_batch`), so that erasing every episode that declared one strips it (docs/governance.md,
    "Erasure: forget", step 8).
    `now` (aware UTC; default the time of the call) is the transaction time of what this call writes: a new
    entity's `created_at` and `updated_at`, an enriched one's `updated_at`. A caller that records facts with the
    entities in one transaction passes its own, so that no fact is recorded before its entities exist (a read at
    `known_at` = the fact's `recorded_at` found the fact but not its subject).
    Runs inside the caller's write transaction; identical refs are resolved once, so a bulk batch costs a fixed
    number of queries (at most four, plus `entities/declare_batch` when a reference from an episode declares
    something) whatever its size.
    """
    fields = list(fields or [f"entities[{i}]" for i in range(len(refs))])
    refs = [keyless_name_dropped(r) for r in refs]
    for ref, f in zip(refs, fields):
        _check_ref(ref, f, settings)
    first: dict[tuple, int] = {}
    slot = [first.setdefault(_ref_key(r), i) for i, r in enumerate(refs)]
    unique = sorted(set(slot))
    now = now or utcnow()
    known: dict[str, dict] = {}      # entity id -> brief map
    resolved: dict[int, str] = {}
    created: set[str] = set()        # ids of the entities this call created

    by_id = [i for i in unique if refs[i].id]
    if by_id:
        known.update({r["entity"]["id"]: r["entity"] for r in
                      tx.rows("entities/brief_many", tenant_id=tenant_id, ids=[refs[i].id for i in by_id])})
        for i in by_id:
            if refs[i].id not in known:
                raise NotFound(f"{fields[i]}.id: no entity {refs[i].id!r}", field=f"{fields[i]}.id")
            _check_named(refs[i], known[refs[i].id], fields[i])
            resolved[i] = refs[i].id

    by_ref = [i for i in unique if not refs[i].id]
    if by_ref:
        rows = tx.one("entities/resolve_batch", tenant_id=tenant_id, refs=[
            {"idx": i, "email": refs[i].email, "domain": refs[i].domain, "external_keys": refs[i].external_ids,
             "systems": id_systems(refs[i].external_ids),
             "alias_key": alias_key(refs[i].kind, name_key(refs[i].name)) if refs[i].name else None}
            for i in by_ref])["rows"]
        to_create: dict[str, dict] = {}   # dedupe new entities within the batch by identifier / alias key
        created_by: dict[str, int] = {}   # to_create key -> index of the first reference that creates it
        pending: dict[int, str] = {}      # ref index -> its to_create key, then the new entity's id
        unnamed: list[int] = []           # refs by identifiers alone that match no stored entity
        alias_of = _alias_links(refs, rows)   # a name another reference of the batch gives as an alias -> that ref
        by_name: list[int] = []               # refs that took a stored entity by its name, not an identifier
        for row in rows:
            i, ref, named, match = row["idx"], refs[row["idx"]], row["named"], row["match"]
            _check_resolution(ref, row, fields[i], namesakes)
            if row["namesakes"] and not row["identified"] and _identifier_keys(ref):
                # "owner": identifiers that name none of the namesakes tell them apart from this one, which is
                # created beside them (linked from the name's alias) rather than given to the alias's owner
                match = None
            if match:
                _check_identified_kind(ref, match, fields[i])   # only a strong identifier matches across kinds
                resolved[i] = match["id"]
                known[match["id"]] = match
                if not row["identified"]:
                    by_name.append(i)
                continue
            if ref.name is None:   # identifiers alone: an entity this batch creates, or none (below)
                unnamed.append(i)
                continue
            if i in alias_of:   # as it would resolve had the other reference come in an earlier call
                continue
            key = alias_key(ref.kind, name_key(ref.name))
            dedupe = ref.email or ref.domain or (f"external:{ref.external_ids[0]}" if ref.external_ids else key)
            if dedupe in to_create:   # an identifier another reference of the batch creates an entity with
                _check_identified_kind(ref, to_create[dedupe], fields[i])
            else:
                # a namesake created earlier in this batch with another email, domain or id of one external system
                # is somebody else, as a stored one is (resolve_batch): this one is linked from the name's alias
                claimed = named or any(row["alias_key"] == key and row["claim_alias"] and _other_person(ref, row)
                                       for row in to_create.values())
                created_by[dedupe] = i
                to_create[dedupe] = {"id": None, "kind": ref.kind, "name": ref.name, "name_key": name_key(ref.name),
                                     "alias_key": key, "claim_alias": not claimed, "email": ref.email,
                                     "domain": ref.domain, "summary": ref.summary, "search_text": ref.name,
                                     "search_terms": search_terms(tenant_id, ref.name),
                                     "external_keys": ref.external_ids, "systems": id_systems(ref.external_ids)}
            pending[i] = dedupe
        if unnamed:
            creates = {ident: d for j, d in pending.items() for ident in _identifier_keys(refs[j])}
            for i in unnamed:
                found = sorted({creates[k] for k in _identifier_keys(refs[i]) if k in creates})
                if not found:
                    raise NotFound(f"{fields[i]}: no entity with {_identifiers(refs[i])}; a new entity needs a kind "
                                   "and a name", field=fields[i])
                if len(found) > 1:
                    raise InvalidInput(f"{fields[i]}: {_identifiers(refs[i])} name {len(found)} different entities "
                                       "this batch creates; they must name one", field=fields[i])
                _check_identified_kind(refs[i], to_create[found[0]], fields[i])
                pending[i] = found[0]
        for i, j in alias_of.items():
            if j in resolved:
                resolved[i] = resolved[j]
            else:
                pending[i] = pending[j]
        if namesakes == "refuse":   # a stored entity's name, where an earlier reference of the batch creates a
            last = {k: j for j, k in enumerate(slot)}   # a repeated reference: its last place in the batch
            for i in by_name:       # namesake it could be (as in two calls in batch order)
                key = alias_key(refs[i].kind, name_key(refs[i].name))
                new = [r for d, r in to_create.items() if r["alias_key"] == key and created_by[d] < last[i]
                       and not _other_person(refs[i], r)]
                if new:
                    stored = known[resolved[i]]
                    shown = "; ".join([f"{stored['name']!r} (id {stored['id']})"] + [
                        f"{r['name']!r} ({r['email'] or r['domain'] or ', '.join(r['external_keys'])}, new)"
                        for r in new[:4]])
                    raise InvalidInput(f"{fields[i]}.name: {refs[i].name!r} names more than one entity, one this "
                                       f"batch creates: {shown}; give its id, email or external id",
                                       field=f"{fields[i]}.name")
            # a name alone, where this batch creates namesakes told apart by identifiers
            for i, d in pending.items():
                if i in alias_of:   # it named one of them by the alias that one gave
                    continue
                same = [r for r in to_create.values() if r["alias_key"] == to_create[d]["alias_key"]
                        and (r["email"] or r["domain"] or r["external_keys"])]
                if refs[i].name and not _identifier_keys(refs[i]) and len(same) > 1:
                    shown = "; ".join(f"{r['name']!r} ({r['email'] or r['domain'] or ', '.join(r['external_keys'])})"
                                      for r in same[:5])
                    raise InvalidInput(f"{fields[i]}.name: {refs[i].name!r} names more than one entity this batch "
                                       f"creates: {shown}; give its email or external id", field=f"{fields[i]}.name")
        if to_create:
            for row, eid in zip(to_create.values(), new_ids(len(to_create))):
                row["id"] = eid
            pending = {i: to_create[d]["id"] for i, d in pending.items()}
            # the query returns only the rows whose alias another writer owned first (they created nothing)
            owners = {r["requested_id"]: r["id"] for r in
                      tx.rows("entities/create_batch", tenant_id=tenant_id, tenant_token=tenant_token(tenant_id),
                              now=now, rows=list(to_create.values()))}
            if owners:
                known.update({r["entity"]["id"]: r["entity"] for r in
                              tx.rows("entities/brief_many", tenant_id=tenant_id, ids=list(set(owners.values())))})
            for row in to_create.values():
                if row["id"] not in owners:
                    known[row["id"]] = {**row, "aliases": [], "external_ids": []}
                    created.add(row["id"])
            for i, rid in pending.items():
                resolved[i] = owners.get(rid, rid)
                if rid in owners:   # another writer's entity, found by the name's alias or an identifier
                    _check_identified_kind(refs[i], known[resolved[i]], fields[i])

    sources: dict[int, set[str]] = {}
    for i, ep in zip(slot, episodes or []):
        if ep:
            sources.setdefault(i, set()).add(ep)
    kept_email = _email_set_later(tx, tenant_id, refs, unique, resolved, known, sources)
    enrich: dict[str, dict] = {}
    for i in unique:   # what a reference brings: its names as aliases; identifiers only where it was not by id
        ref, ent, by_name = refs[i], known[resolved[i]], not refs[i].id
        have = {name_key(a) for a in [ent["name"], *ent["aliases"]]}
        aliases = [a for a in [ref.name, *ref.aliases] if a and name_key(a) and name_key(a) not in have]
        ext = [k for k in ref.external_ids if k not in ent["external_ids"]] if by_name else []
        # named by its external id with another email: the external record's email replaces the stored one
        # (resolve_batch found no other entity with it: that is EmailTaken, above)
        replace_email = _replaces_email(ref, ent) and resolved[i] not in kept_email
        new_email = by_name and ref.email and (not ent.get("email") or replace_email)
        new_domain = by_name and ref.domain and not ent.get("domain")
        new_summary = ref.summary and ref.summary != ent.get("summary")
        if aliases or ext or new_email or new_domain or new_summary:
            row = enrich.setdefault(resolved[i], {"id": resolved[i], "email": None, "replace_email": False,
                                                  "domain": None, "summary": None, "external_keys": [],
                                                  "aliases": []})
            if replace_email:   # the last such reference of the batch (record order) wins
                row["email"], row["replace_email"] = ref.email, True
            else:
                row["email"] = row["email"] or (ref.email if new_email else None)
            row["domain"] = row["domain"] or (ref.domain if new_domain else None)
            row["summary"] = ref.summary if new_summary else row["summary"]
            row["external_keys"] += [k for k in ext if k not in row["external_keys"]]
            row["aliases"] += [{"name": a, "key": alias_key(ent["kind"], name_key(a)), "name_key": name_key(a),
                                 "terms": search_terms(tenant_id, a)}
                               for a in aliases if a not in [x["name"] for x in row["aliases"]]]
    if enrich:
        tx.rows("entities/enrich_batch", tenant_id=tenant_id, now=now, rows=list(enrich.values()))
    _declare(tx, tenant_id, refs, resolved, known, enrich, sources, created)   # without episodes: a summary's reset
    briefs = {i: EntityBrief(known[resolved[i]]["id"], known[resolved[i]]["kind"], known[resolved[i]]["name"],
                             resolved[i] in created)
              for i in unique}
    return [briefs[slot[i]] for i in range(len(refs))]


def _declare(tx: Tx, tenant_id: str, refs: Sequence[EntityRef], resolved: dict[int, str], known: dict[str, dict],
             enrich: dict[str, dict], sources: dict[int, set[str]], created: set[str]) -> None:
    """Record which episodes declared which attributes of the entities `resolve` just resolved: for reference `i`
    (resolved to entity `resolved[i]`, whose brief map before enrichment is in `known`, the enrichment written in
    `enrich`) from the episodes `sources[i]`: the entity's name when the reference gives that name (as its name or
    an alias), if the
    entity is one this call `created` or its name already has a declaration (a name written without an episode,
    `TemporalGraph.upsert_entity`, stays undeclared: an episode that repeats it did not give it), the aliases it gives
    other than the entity's name, and, when it was not by id, its external ids, email and domain; and its summary.
    `entities/declare_batch` links only what the entity has (an alias another entity owns, another email than the
    entity's, is not declared for it), and an email, domain or summary only when this write set it or an episode
    declared it before (one written without an episode stays undeclared, as its name does). A summary or an email this
    write replaced loses the declarations of the old value (also when the write has no episode), and only the text the entity ends up with is declared (two references of one batch may
    give two). One query, none when nothing is declared or reset."""
    final = {eid: r["summary"] for eid, r in enrich.items() if r["summary"] is not None}
    # what this write set (an entity it created: all it has): only a value set by an episode, now or before, is one
    # an episode declares; one written without an episode stays undeclared when an episode repeats it
    fresh = {eid: ["email", "domain", "summary"] if eid in created else
             [k for k in ("email", "domain", "summary") if enrich.get(eid, {}).get(k) is not None]
             for eid in set(resolved.values())}
    rows: dict[tuple[str, str], dict] = {}
    for i, eps in sources.items():
        ref, eid = refs[i], resolved[i]
        ent = known[eid]
        own = name_key(ent["name"])
        keys = [alias_key(ent["kind"], name_key(a)) for a in [ref.name, *ref.aliases]
                if a and name_key(a) and name_key(a) != own]
        named = any(a and name_key(a) == own for a in [ref.name, *ref.aliases])   # an alias that is its name too
        by_name = not ref.id
        ext = list(ref.external_ids) if by_name else []
        email, domain = (ref.email, ref.domain) if by_name else (None, None)
        if not (keys or named or ext or email or domain or ref.summary):
            continue
        for ep in sorted(eps):
            row = rows.setdefault((eid, ep), {"entity_id": eid, "episode_id": ep, "alias_keys": [], "name": False,
                                              "created": eid in created, "fresh": fresh[eid],
                                              "external_keys": [], "email": None,
                                              "domain": None, "summary": None})
            row["name"] = row["name"] or named
            row["alias_keys"] += [k for k in keys if k not in row["alias_keys"]]
            row["external_keys"] += [k for k in ext if k not in row["external_keys"]]
            row["email"] = row["email"] or email
            row["domain"] = row["domain"] or domain
            if ref.summary and ref.summary == final.get(eid, ent.get("summary")):
                row["summary"] = ref.summary
    reset = sorted(eid for eid, r in enrich.items() if r["summary"] is not None and known[eid].get("summary"))
    reset_email = sorted(eid for eid, r in enrich.items() if r["replace_email"])
    if rows or reset or reset_email:
        tx.run("entities/declare_batch", tenant_id=tenant_id, reset_summary=reset,   # entity order: as locks go
               reset_email=reset_email, rows=[rows[k] for k in sorted(rows)])


def get(tx: Tx, tenant_id: str, entity_id: str, field: str = "entity_id") -> Entity:
    """The entity `entity_id` of this tenant; `NotFound` otherwise (also for another tenant's id), naming `field`
    (the request field that carried the id) as every unknown id's message does: "entity_id: no entity 'x'"."""
    rows = [r for r in tx.rows("entities/get_many", tenant_id=tenant_id, ids=[entity_id]) if whole(r["entity"], Entity)]
    if not rows:   # none, or one deleted while it was read (`whole`)
        raise NotFound(f"{field}: no entity {entity_id!r}", field=field)
    return Entity(**rows[0]["entity"])


def find_by_name(tx: Tx, tenant_id: str, name: str, kind: str | None = None, limit: int = 10) -> list[Entity]:
    """Entities whose name or an alias normalises like `name` (optionally of one kind), oldest first."""
    return [Entity(**r["entity"]) for r in tx.rows("entities/find_by_name", tenant_id=tenant_id,
                                                   name_key=name_key(name), kind=kind, limit=limit)
            if whole(r["entity"], Entity)]
