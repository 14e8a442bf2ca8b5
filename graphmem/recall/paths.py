"""Multi-hop recall: paths over reified facts, Entity <-[:SUBJECT|OBJECT]- Fact -[:SUBJECT|OBJECT]-> Entity.

Queries use Neo4j 5 quantified path patterns (`cypher/recall/around`, `between`) with per-hop filters: only facts
valid at `as_of` (valid time) as known at `known_at` (transaction time), never candidates, never past retention.
Paths are ranked by length (fewer hops first), then by their weakest hop's confidence, then by the most recent
hop `valid_from`. Cypher does not accept a parameter as a quantifier, so the bounds are literals: 4 hops
(`MAX_HOPS`) between two entities, 3 (`AROUND_MAX_HOPS`) around one. Around one entity the search must visit the
whole neighbourhood, and on a CRM graph three hops already reach most of a tenant; exploring a fourth level and
filtering it away cost ~40% of the query (PROFILE db hits, bench/recall.py graph).
Hot queries return temporal values as ISO-8601 strings, which the pydantic models parse.
"""
from __future__ import annotations

from pydantic import BaseModel, Field, TypeAdapter

from graphmem.models import Entity, Fact, UtcDatetime

MAX_HOPS = 4
AROUND_MAX_HOPS = 3


class Hop(BaseModel):
    """One step of a path: from entity `from_id` over `fact` to `to_id`. `direction` is "out" when `from_id` is
    the fact's subject, "in" when it is the object. `episode_ids` are the fact's provenance."""

    from_id: str
    from_name: str
    to_id: str
    to_name: str
    direction: str
    fact: Fact
    episode_ids: list[str] = Field(default_factory=list)


class Path(BaseModel):
    """A path of `length` hops ending at `target`. `confidence` is the weakest hop's; `latest` the most recent
    `valid_from` (UTC) along it."""

    target: Entity
    length: int
    confidence: float
    latest: UtcDatetime
    hops: list[Hop]


class Neighbour(BaseModel):
    """A fact one hop from the entity; `neighbour` is the entity at the other end (None for literal values)."""

    direction: str
    fact: Fact
    neighbour: Entity | None = None
    episode_ids: list[str] = Field(default_factory=list)


class Member(BaseModel):
    """A result of "who at organisation X has property Y": the entity, its membership fact and the matching
    property fact (None when no property was asked), each with provenance episode ids."""

    entity: Entity
    membership: Fact
    membership_episode_ids: list[str]
    property: Fact | None = None
    property_episode_ids: list[str] = Field(default_factory=list)


def to_path(row: dict) -> Path:
    """A row of `recall/between` -> `Path` (hop facts get subject/object ids filled in), validated in one call."""
    hops = []
    for h in row["hops"]:
        out = h["subject_id"] == h["from_id"]
        fact = {**h["fact"], "subject_id": h["subject_id"], "object_id": h["to_id"] if out else h["from_id"]}
        hops.append({**h, "direction": "out" if out else "in", "fact": fact})
    return Path.model_validate({**row, "hops": hops})


def to_paths(row: dict) -> list[Path]:
    """The row of `recall/around` (`facts`: each distinct hop fact once, `paths`: hops by fact id) -> `Path`s.
    A fact shared by several paths is validated once and shared by their hops. The facts, then the paths, are
    validated in one pydantic call each (`_FACTS`, `_PATHS`): for a 3-hop answer (~50 paths, ~50 facts, ~115 hops)
    that costs ~0.9 ms, against ~1.5 ms for one model constructor per object (bench/recall.py graph)."""
    ends: dict[str, tuple[str, str]] = {}
    for p in row["paths"]:
        for h in p["hops"]:
            ends.setdefault(h["fact_id"], (h["from_id"], h["to_id"]))
    raws = row["facts"]
    for f in raws:   # the object is the hop's other end (a hop's fact always joins two entities)
        a, b = ends[f["id"]]
        f["object_id"] = b if f["subject_id"] == a else a
    facts = {f.id: f for f in _FACTS.validate_python(raws)}
    provenance = {f["id"]: f["episode_ids"] for f in raws}
    paths = []
    for p in row["paths"]:
        hops = []
        for h in p["hops"]:
            fact = facts[h["fact_id"]]
            hops.append({**h, "fact": fact, "episode_ids": provenance[fact.id],
                         "direction": "out" if fact.subject_id == h["from_id"] else "in"})
        paths.append({**p, "hops": hops})
    return _PATHS.validate_python(paths)


_FACTS = TypeAdapter(list[Fact])
_PATHS = TypeAdapter(list[Path])
