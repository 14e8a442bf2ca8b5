"""Multi-hop recall: paths over facts, each hop one fact's derived (subject)-[:RELATED]->(object) edge, walked in
either direction (the edge copies what the walk filters and ranks by; the Fact node, read by id, stays the record).

Both walks take only facts valid at `as_of` (valid time) as known at `known_at` (transaction time), never
candidates, never past retention. Paths are ranked by length (fewer hops first), then by their weakest hop's
confidence, then by the most recent hop `valid_from`. Both are breadth-first walks of one subquery per level.
Around one entity (`cypher/recall/around`) up to 3 levels (`AROUND_MAX_HOPS`): it must visit the whole
neighbourhood, and on a CRM graph three hops already reach most of a tenant; each level keeps per entity only the
partial paths no other beats on both ranking keys (the last level only the best). Between two entities
(`cypher/recall/between`) up to 4 levels (`MAX_HOPS`), stopping at the level that reaches the other entity: a first
walk over entities finds the levels and
bounds the paths (the k-th strongest weakest hop at the other end, the strongest, the earliest latest valid_from),
then a walk over the levels' edges keeps per entity the partial paths fewer than k others beat on both keys within
those bounds, so the answer is the k best of the shortest paths (exact on both keys; among paths equal on both,
which ones fill the last places is fixed by the walk). Their work grows with the edges walked, not with the number
of shortest paths (`ALL SHORTEST` listed 10k paths per target on a dense graph and ran out of transaction memory;
`SHORTEST k` took k of the equally short paths arbitrarily; the between walk without the bounds kept ~30 partial
paths per entity on three fully joined layers of 100 people and ran out of it too).
Hot queries return temporal values as ISO-8601 strings, which the pydantic models parse.

A path carries what navigating it needs and no more: the target's id, kind and name (`PathEntity`), and per hop
the fact's statement, predicate, valid time and confidence (`HopFact`) with its provenance episode ids. The full
records, with transaction time, source and retention, are one `GET /v1/facts/{id}` / `/v1/entities/{id}` away.
Returning full `Fact` and `Entity` records instead cost ~25% more CPU per 3-hop call (Neo4j projection, driver
decoding and validation; bench/recall.py graph, ~50 paths per call).
"""
from __future__ import annotations

from pydantic import BaseModel, Field, TypeAdapter

from graphmem.models import Entity, Fact, UtcDatetime

MAX_HOPS = 4
AROUND_MAX_HOPS = 3


class PathEntity(BaseModel):
    """An entity a path reaches or passes: `id`, `kind`, `name` (the full record: `GET /v1/entities/{id}`)."""

    id: str
    kind: str
    name: str

    @classmethod
    def of(cls, entity: Entity) -> "PathEntity":
        """The reference to a full `Entity` record."""
        return cls(id=entity.id, kind=entity.kind, name=entity.name)


class HopFact(BaseModel):
    """The fact a hop walks: what it says and when it was true (valid time, UTC), as believed at the walk's
    `known_at` (an end learned later is not shown, as `Fact.as_known_at`). A hop always joins two entities, so
    `object_id` is set. The full record, with transaction time and source: `GET /v1/facts/{id}`."""

    id: str
    predicate: str
    subject_id: str
    object_id: str
    statement: str
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None
    confidence: float


class Hop(BaseModel):
    """One step of a path: from entity `from_id` over `fact` to `to_id` (of kind `to_kind`). `direction` is "out"
    when `from_id` is the fact's subject, "in" when it is the object. `episode_ids` are the fact's provenance: the
    episodes that asserted or confirmed it (one that retracted it, shown when the walk's `as_of` is before its end,
    is not; `GET /v1/facts/{id}/provenance` lists every episode with its role)."""

    from_id: str
    from_name: str
    to_id: str
    to_name: str
    to_kind: str
    direction: str
    fact: HopFact
    episode_ids: list[str] = Field(default_factory=list)


class Path(BaseModel):
    """A path of `length` hops ending at `target`. `confidence` is the weakest hop's; `latest` the most recent
    `valid_from` (UTC) along it."""

    target: PathEntity
    length: int
    confidence: float
    latest: UtcDatetime
    hops: list[Hop]


class Neighbour(BaseModel):
    """A fact one hop from the entity; `neighbour` is the entity at the other end (None for literal values);
    `episode_ids` the episodes that asserted or confirmed the fact (as `Hop`'s)."""

    direction: str
    fact: Fact
    neighbour: Entity | None = None
    episode_ids: list[str] = Field(default_factory=list)


class Member(BaseModel):
    """A result of "who at organisation X has property Y": the entity, its membership fact and the matching
    property fact (None when no property was asked), each with provenance episode ids (the episodes that asserted or
    confirmed it, as `Hop`'s)."""

    entity: Entity
    membership: Fact
    membership_episode_ids: list[str]
    property: Fact | None = None
    property_episode_ids: list[str] = Field(default_factory=list)


def _ends(hop: dict) -> dict:
    """A hop row's `out` flag (it walks from the fact's subject) -> the fact's subject and object ids."""
    subject, obj = (hop["from_id"], hop["to_id"]) if hop["out"] else (hop["to_id"], hop["from_id"])
    return {"subject_id": subject, "object_id": obj}


def to_path(row: dict) -> Path | None:
    """A row of `recall/between` -> `Path`, validated in one call; None when the read did not find a hop's fact
    (one being committed or erased while the walk ran: its RELATED edge was seen, its Fact was not)."""
    if any(h["fact"] is None for h in row["hops"]):
        return None
    hops = [{**h, "direction": "out" if h["out"] else "in", "fact": {**h["fact"], **_ends(h)}} for h in row["hops"]]
    return Path.model_validate({**row, "hops": hops})


def to_paths(row: dict) -> list[Path]:
    """The row of `recall/around` (`facts`: each distinct hop fact once, `paths`: hops by fact id) -> `Path`s.
    A fact shared by several paths is validated once and shared by their hops (a fact lies on shortest paths in
    one direction only). The facts, then the paths, are validated in one pydantic call each (`_FACTS`, `_PATHS`).
    A path with a hop whose fact the read did not find (one being committed or erased while the walk ran: its
    RELATED edge was seen, its Fact was not) is left out, as a search leaves out a winner deleted between reads."""
    ends: dict[str, dict] = {}
    for p in row["paths"]:
        for h in p["hops"]:
            if h["fact_id"] not in ends:
                ends[h["fact_id"]] = _ends(h)
    raws = row["facts"]
    facts = {f.id: f for f in _FACTS.validate_python([{**f, **ends[f["id"]]} for f in raws])}
    provenance = {f["id"]: f["episode_ids"] for f in raws}
    paths = []
    for p in row["paths"]:
        if any(h["fact_id"] not in facts for h in p["hops"]):
            continue
        hops = []
        for h in p["hops"]:
            fact = facts[h["fact_id"]]
            hops.append({**h, "fact": fact, "episode_ids": provenance[fact.id], "direction": "out" if h["out"] else "in"})
        paths.append({**p, "hops": hops})
    return _PATHS.validate_python(paths)


_FACTS = TypeAdapter(list[HopFact])
_PATHS = TypeAdapter(list[Path])
