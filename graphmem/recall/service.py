"""`RecallService`: hybrid search and multi-hop recall for one process (`services.recall`).

Search: `graphmem.recall.search.HybridSearch` (full-text + vector + graph proximity, RRF, optional MMR).
Multi-hop: `graphmem.recall.paths` shapes over the `cypher/recall/*` level walks (around one entity, between two).
Entities used as seeds are found from ids, names (normalised name or alias) or free text (full-text + vector
over entities). Every method takes `tenant_id` first and raises `TenantRequired` before any query when it is
missing; unknown (or other tenants') ids raise `NotFound` naming the field.
"""
from __future__ import annotations

from datetime import datetime

from graphmem.errors import InvalidInput, NotFound
from graphmem.graph import check_every_version
from graphmem.identifiers import blank, value_key
from graphmem.models import BLANK_WORDS, Entity, Fact
from graphmem.ontology import ANY_KIND, LITERAL, Ontology
from graphmem.recall.lucene import build_query, fuzzy_query, terms
from graphmem.recall.models import SearchRequest, SearchResponse, Viewer
from graphmem.recall.paths import AROUND_MAX_HOPS, MAX_HOPS, Member, Neighbour, Path, to_path, to_paths
from graphmem.recall.search import TOO_MANY_TERMS, HybridSearch, SearchTuning
from graphmem.store import Database, require_tenant, whole
from graphmem.timeutil import to_utc, utcnow


AMBIGUOUS_SHOWN = 5
"""How many of the entities an ambiguous name matches its error lists."""
QUERY_HINT_WORDS = 10
"""The words of a free-text entity `query` that matched nothing searched misspelt for the 404's hint."""
INTRODUCER_KIND = "Person"
"""The entity kind `RecallService.introduction` prefers between the two ends of a connection."""
MAX_NAME_FETCH = 64_000
"""The most full-text matches an entity lookup by name reads to settle a page a deeper read could change: a group of
equal scores the index cut, or a page a kind left short (each read 4 times deeper than the last, from 1,000 or
20 x (offset + limit); search/entities_by_text)."""


class RecallService:
    """Search and multi-hop recall over one shared `Database` (thread-safe)."""

    def __init__(self, db: Database, graph, embedder=None, tuning: SearchTuning | None = None):
        self.db, self.graph = db, graph
        self.hybrid = HybridSearch(db, embedder, tuning)

    # ---- search -------------------------------------------------------------------------------
    def search(self, tenant_id: str, req: SearchRequest, viewer: Viewer | None = None) -> SearchResponse:
        """Hybrid search; see `graphmem.recall.search`. With `viewer` (a context window) only what its session may
        see is ranked (`Viewer`; the answer is then a `ViewedSearchResponse`). `InvalidInput` (field predicates) for
        a predicate the tenant's ontology does not have."""
        self.graph.known_predicates(tenant_id, req.predicates, "predicates")
        return self.hybrid.search(tenant_id, req, viewer)

    def warm_up(self, tenant_id: str) -> None:
        """Have Neo4j plan the search before the first request, in the shapes requests send
        (`HybridSearch.warm_up`; `tenant_id` should hold nothing). Raises what the search raises (Neo4j not
        reachable: `Unavailable`)."""
        self.hybrid.warm_up(tenant_id)

    def warm_up_paths(self, tenant_id: str) -> None:
        """Have Neo4j plan the search for entities by name (`find_entities`, which also finds seeds) and each
        multi-hop read (around, between, neighbours, who at) as its method sends it, here about an entity that does
        not exist, so each finds nothing. Cold, Neo4j plans a path query in 0.2-1 s (docs/benchmarks/recall.md,
        "Cold plans"). `tenant_id` should hold nothing. Run inside `Database.replanning()` (`graphmem.ops.warm_up`),
        each read also parses its `CYPHER replan=skip` form. Raises what the reads raise."""
        self.find_entities(tenant_id, name="warm up")
        self.find_entities(tenant_id)
        times, none = self._times(None, None), "warm-up: no such entity"
        self._around(tenant_id, none, 3, times, 50, None)
        self._between(tenant_id, none, none + " either", 3, 5, times, None)
        self._neighbours(tenant_id, none, None, "both", times, False, 0, 50)
        self._who_at(tenant_id, none, "WORKS_AT", times, 0, 50, {
            "predicate": None, "value_key": None, "object_id": None, "via_predicate": None, "via_value_key": None,
            "symmetric": False, "member_symmetric": False, "via_symmetric": False})

    # ---- entities ------------------------------------------------------------------------------
    def get_entity(self, tenant_id: str, entity_id: str) -> Entity:
        """The entity `entity_id` of this tenant; `NotFound` otherwise."""
        return self.graph.get_entity(tenant_id, entity_id)

    def find_entities(self, tenant_id: str, name: str | None = None, kind: str | None = None,
                      offset: int = 0, limit: int = 50) -> list[Entity]:
        """Entities whose name or alias matches `name` (exact normalised matches first, then full-text by score,
        name and id), or all entities (of `kind`) by name when `name` is None. Paginated by `offset`/`limit`; pages
        agree (no repeats, no gaps) over the first `MAX_NAME_FETCH` full-text matches."""
        require_tenant(tenant_id)
        if name is not None and blank(name):
            raise InvalidInput(f"name {BLANK_WORDS}", field="name")
        lucene = build_query(name, tenant_id) if name else None
        if name and lucene is None:
            raise InvalidInput("name has no letters or digits", field="name")
        if not name:   # every entity by name: the page is cut in Neo4j (reading offset + limit entities into
            # Python to slice them took 4.2 s at offset 10,000, helper-found)
            return [Entity(**r["entity"]) for r in self.db.rows(
                "search/entities_by_name", warmed=True, tenant_id=tenant_id, opt={"kind": kind},
                offset=offset, limit=limit) if whole(r["entity"], Entity)]
        exact = self.graph.find_entities(tenant_id, name, kind, limit=offset + limit)
        fetch = max(1000, 20 * (offset + limit))
        while True:   # a page a deeper read could change is read again deeper, so pages of any size agree
            # (helper-found: 1,200 names alike, paged by 37, repeated 30 and skipped 30; 40 people behind 1,500
            # organisations named alike were not found with kind Person)
            row = self.db.read_one("search/entities_by_text", warmed=True, tenant_id=tenant_id,
                                   opt={"lucene": lucene, "kind": kind}, offset=0,
                                   limit=offset + limit + len(exact), fetch=fetch)
            if fetch >= MAX_NAME_FETCH or not row["deeper"]:
                break
            fetch = min(MAX_NAME_FETCH, fetch * 4)
        seen, out = set(), []
        for e in exact + [Entity(**r["entity"]) for r in row["entities"] if whole(r["entity"], Entity)]:
            if e.id not in seen:
                seen.add(e.id)
                out.append(e)
        return out[offset:offset + limit]

    def _misspelt(self, tenant_id: str, name: str, kind: str | None, limit: int = 3) -> list[Entity]:
        """The entities (of `kind`) whose name or alias is a word or two of `name` misspelt (`fuzzy_query`), best
        first: the hint for a name that matches nothing ("Globx")."""
        lucene = fuzzy_query(name, tenant_id)
        if lucene is None:
            return []
        row = self.db.read_one("search/entities_by_text", tenant_id=tenant_id, opt={"lucene": lucene, "kind": kind},
                               offset=0, limit=limit, fetch=1000)
        return [Entity(**r["entity"]) for r in row["entities"] if whole(r["entity"], Entity)]

    def resolve_entity(self, tenant_id: str, *, entity_id: str | None = None, name: str | None = None,
                       query: str | None = None, kind: str | None = None, field: str = "entity",
                       query_hint: bool = True) -> Entity:
        """One seed entity from an id, a name (its normalised name or an alias, exactly: "Dana Smith" never
        stands for Dana Reyes) or free text (full-text + vector over entities: the best fused hit that full-text
        found; vectors rank, but a hit found by vector similarity alone does not resolve, since the nearest entity
        always exists: "Zorblax" is not Globex, with or without an embedder). Raises
        `InvalidInput` when none is given, when full-text cannot search the query for its length (too many terms:
        `TOO_MANY_TERMS`) or when the name is more than one entity's (listing up to five of them with their kinds
        and ids), `NotFound` when nothing matches (for a name or a query, naming the closest entities by text as a
        hint, and for a query the closest by meaning; for an id, also when the entity is not of `kind`). `field` is
        where the selector sits in the request (e.g. "entity" for `{"entity": {"name": ...}}`): errors name its part, "entity.id",
        "entity.name" or "entity.query".
        `query_hint`: the name's errors suggest `query` for free text and `kind` for an ambiguous name (false where
        the caller has neither: a query parameter that takes an id or a name)."""
        require_tenant(tenant_id)
        if entity_id:
            found = self.entity(tenant_id, entity_id, field=f"{field}.id")
            if kind and found.kind != kind:   # `kind` given with an id is a check, never dropped
                raise NotFound(f"{field}.id: no {kind} {entity_id!r}; it is {found.name!r} of kind {found.kind}",
                               field=f"{field}.id")
            return found
        if name:
            if build_query(name, tenant_id) is None:
                raise InvalidInput(f"{field}.name: the name has no letters or digits", field=f"{field}.name")
            exact = self.graph.find_entities(tenant_id, name, kind, limit=AMBIGUOUS_SHOWN + 1)
            if len(exact) == 1:
                return exact[0]
            if exact:   # never one of them picked silently: "Mercury Lane" the person, or the company?
                shown = "; ".join(f"{e.kind} {e.name!r} (id {e.id})" for e in exact[:AMBIGUOUS_SHOWN])
                more = " and more" if len(exact) > AMBIGUOUS_SHOWN else ""
                one_kind = kind or len({e.kind for e in exact}) == 1   # then only an id tells them apart
                tip = (f"give {field}.id" if one_kind else f"give {field}.kind or {field}.id") if query_hint \
                    else "give one of their ids"
                raise InvalidInput(f"{field}.name: {name!r} names more than one entity: {shown}{more}; {tip}",
                                   field=f"{field}.name")
            other_kinds = sorted({e.kind for e in self.graph.find_entities(tenant_id, name, None)}) if kind else []
            if other_kinds:
                raise NotFound(f"{field}.name: no {kind} named {name!r}; there is one of kind "
                               f"{', '.join(other_kinds)} (`kind` narrows the name)", field=f"{field}.name")
            near = [e.name for e in self.find_entities(tenant_id, name, kind, limit=3) or self._misspelt(
                tenant_id, name, kind)]
            tip = "; `query` takes free text" if query_hint else ""
            hint = f" (closest by text: {', '.join(map(repr, near))}{tip})" if near else ""
            raise NotFound(f"{field}.name: no entity named {name!r}{hint}", field=f"{field}.name")
        if query:
            if not terms(query):   # as a name with no letters or digits: nothing to match, not "no match"
                raise InvalidInput(f"{field}.query: the query has no letters or digits", field=f"{field}.query")
            res = self.search(tenant_id, SearchRequest(query=query, k=5, targets=["entity"],
                                                       entity_kinds=[kind] if kind else None))
            for hit in res.hits:   # the best fused hit that shares a word with the query
                if any(not r.startswith("vector") for r in hit.reasons):
                    return hit.entity
            if TOO_MANY_TERMS in res.degraded:   # the words could not be searched at all: say so, not "no match"
                raise InvalidInput(f"{field}.query: {TOO_MANY_TERMS.reason}",
                                   field=f"{field}.query")
            # as for a name: the entities a word of it names misspelt ("Globx renewal": Globex); of its first
            # QUERY_HINT_WORDS words only (each fuzzy word expands to many terms, and Lucene caps a query's clauses)
            spelt = self._misspelt(tenant_id, " ".join(query.split()[:QUERY_HINT_WORDS]), kind)
            near = [f"closest by text: {', '.join(repr(e.name) for e in spelt)}"] if spelt else []
            if res.hits:
                near.append(f"closest by meaning: {res.hits[0].entity.name!r}")
            hint = f" ({'; '.join(near)})" if near else ""
            shown = query if len(query) <= 80 else query[:77] + "..."
            raise NotFound(f"{field}.query: no entity matches {shown!r}{hint}", field=f"{field}.query")
        raise InvalidInput(f"{field}: give an id, a name or a query", field=field)

    def entity_kinds_of(self, tenant_id: str, predicate: str, field: str = "member_predicate") -> list[str]:
        """The entity kinds the tenant's ontology allows as `predicate`'s object (no literal, no wildcard; empty
        for a wildcard): what an organisation named for "who at X" should be. `InvalidInput` naming `field` for an
        unknown predicate, or for one whose object is only ever a literal value (HAS_TITLE: no entity is "at" it,
        so a membership by it could never match)."""
        p = self.graph.ontology(tenant_id).get(predicate.upper(), field)
        if all(k == LITERAL for k in p.object_kinds):
            raise InvalidInput(f"{field}: {p.name} takes a literal value, not an entity, as its object; a membership "
                               "predicate points at the organisation (e.g. WORKS_AT)", field=field)
        return [k for k in p.object_kinds if k not in (LITERAL, ANY_KIND)]

    def entity(self, tenant_id: str, entity_id: str, *, field: str = "entity_id") -> Entity:
        """The tenant's entity `entity_id`; `NotFound` naming `field` (the request field that carried the id)."""
        return self.graph.get_entity(tenant_id, entity_id, field)

    # ---- multi-hop -----------------------------------------------------------------------------
    @staticmethod
    def _times(as_of: datetime | None, known_at: datetime | None) -> tuple[datetime, datetime, datetime]:
        now = utcnow()
        return (now, to_utc(as_of, "as_of") if as_of else now, to_utc(known_at, "known_at") if known_at else now)

    @staticmethod
    def _hops(max_hops: int) -> int:
        if not 1 <= max_hops <= MAX_HOPS:
            raise InvalidInput(f"max_hops must be between 1 and {MAX_HOPS}", field="max_hops")
        return max_hops

    def paths_around(self, tenant_id: str, entity_id: str, *, max_hops: int = 3, as_of: datetime | None = None,
                     known_at: datetime | None = None, predicates: list[str] | None = None,
                     limit: int = 50, field: str = "predicates") -> list[Path]:
        """To every entity within `max_hops` facts of `entity_id` (1..3, default 3) the best of its shortest paths
        (strongest weakest hop, then most recent); the best `limit` by (length, confidence, recency). `NotFound` (field entity_id) for an unknown entity;
        `InvalidInput` (field max_hops) outside 1..3, (field `field`) for a predicate the tenant does not have."""
        require_tenant(tenant_id)
        if not 1 <= max_hops <= AROUND_MAX_HOPS:
            raise InvalidInput(f"max_hops must be between 1 and {AROUND_MAX_HOPS}", field="max_hops")
        row = self._around(tenant_id, entity_id, max_hops, self._times(as_of, known_at), limit,
                           self.graph.known_predicates(tenant_id, predicates, field, walkable=True))
        if not row["paths"]:
            self.graph.get_entity(tenant_id, entity_id)   # NotFound for an unknown entity, else truly no paths
        return to_paths(row)

    def _around(self, tenant_id: str, entity_id: str, max_hops: int, times: tuple[datetime, datetime, datetime],
                limit: int, predicates: list[str] | None) -> dict:
        """The one row of recall/around; `times` = (now, as_of, known_at), checked arguments."""
        now, as_of, known_at = times
        # times as ISO-8601 strings, parsed once in the query (the driver packs a datetime parameter in ~40 µs)
        return self.db.read_one("recall/around", warmed=True, tenant_id=tenant_id, entity_id=entity_id,
                                max_hops=max_hops, as_of=as_of.isoformat(), known_at=known_at.isoformat(),
                                now=now.isoformat(), limit=limit, opt={"predicates": predicates})

    def paths_between(self, tenant_id: str, from_id: str, to_id: str, *, max_hops: int = 3, k: int = 5,
                      as_of: datetime | None = None, known_at: datetime | None = None,
                      predicates: list[str] | None = None, fields: tuple[str, str] = ("from_id", "to_id"),
                      predicate_field: str = "predicate") -> list[Path]:
        """The `k` (1..5) best of the shortest paths of at most `max_hops` facts from `from_id` to `to_id`: every
        path has the shortest length, and they are ranked by confidence (the weakest hop's), then recency (the
        latest hop `valid_from`), listed by their facts' ids where both tie (when more paths tie than fit, which of
        them are returned is fixed by the walk, not by the ids: `cypher/recall/between`); fewer when fewer are that
        short. Empty when they are not connected that closely. `InvalidInput` when the two
        are one entity and `NotFound` for an unknown one name `fields`, the request fields that carried the ids;
        a predicate the tenant does not have is an `InvalidInput` naming `predicate_field`."""
        require_tenant(tenant_id)
        if not 1 <= k <= 5:
            raise InvalidInput("k must be between 1 and 5", field="k")
        for eid, fld in zip((from_id, to_id), fields):
            self.entity(tenant_id, eid, field=fld)    # an unknown id is a 404 before the two are compared
        if from_id == to_id:
            raise InvalidInput(f"{fields[1]}: the same entity as {fields[0]}", field=fields[1])
        rows = self._between(tenant_id, from_id, to_id, self._hops(max_hops), k, self._times(as_of, known_at),
                             self.graph.known_predicates(tenant_id, predicates, predicate_field, walkable=True))
        return [p for p in map(to_path, rows) if p is not None]

    def _between(self, tenant_id: str, from_id: str, to_id: str, max_hops: int, k: int,
                 times: tuple[datetime, datetime, datetime], predicates: list[str] | None) -> list[dict]:
        """The rows of recall/between; `times` = (now, as_of, known_at), checked arguments."""
        now, as_of, known_at = times
        return self.db.rows("recall/between", warmed=True, tenant_id=tenant_id, from_id=from_id, to_id=to_id, k=k,
                            max_hops=max_hops, as_of=as_of.isoformat(), known_at=known_at.isoformat(),
                            now=now.isoformat(), opt={"predicates": predicates})

    def introduction(self, tenant_id: str, from_id: str, to_id: str, *, max_hops: int = 4,
                     as_of: datetime | None = None, known_at: datetime | None = None,
                     predicates: list[str] | None = None,
                     fields: tuple[str, str] = ("from_id", "to_id")) -> Path | None:
        """The shortest connection from `from_id` to `to_id` ("who can introduce us") over facts valid at `as_of`
        as known at `known_at`: the intermediate entities of the returned path are the introducers. Of the best 5
        shortest paths (`paths_between`) the one through the most people (`INTRODUCER_KIND`) wins, then the best
        ranked: a colleague introduces, a company or a deal two people share does not. None when not connected
        within `max_hops` (1..4, default 4: one more than a path around one entity, since the two ends are given).
        Errors as `paths_between`."""
        paths = self.paths_between(tenant_id, from_id, to_id, max_hops=max_hops, k=5, as_of=as_of,
                                   known_at=known_at, predicates=predicates, fields=fields)
        return max(paths, key=lambda p: sum(h.to_kind == INTRODUCER_KIND for h in p.hops[:-1]), default=None)

    def neighbours(self, tenant_id: str, entity_id: str, *, predicates: list[str] | None = None,
                   direction: str = "both", as_of: datetime | None = None, known_at: datetime | None = None,
                   include_superseded: bool = False, offset: int = 0, limit: int = 50) -> list[Neighbour]:
        """Facts one hop from `entity_id` (as subject: "out", as object: "in", or "both"), valid at `as_of` as known
        at `known_at`, or with `include_superseded` every version known then (`as_of` with it is an `InvalidInput`
        naming as_of, `graphmem.graph.check_every_version`), each fact as it was believed then
        (`Fact.as_known_at`); by predicate, then oldest valid_from first, recorded_at and fact id (as
        `GET /v1/facts` and a fact's history)."""
        require_tenant(tenant_id)
        check_every_version(as_of, include_superseded)
        if direction not in ("in", "out", "both"):
            raise InvalidInput("direction must be in, out or both", field="direction")
        self.graph.get_entity(tenant_id, entity_id)
        asked_known_at = to_utc(known_at, "known_at") if known_at else None
        rows = self._neighbours(tenant_id, entity_id, self.graph.known_predicates(tenant_id, predicates, "predicate"),
                                direction, self._times(as_of, known_at), include_superseded, offset, limit)
        return [Neighbour(direction=r["direction"], fact=Fact(**r["fact"]).as_known_at(asked_known_at),
                          neighbour=r["neighbour"], episode_ids=r["episode_ids"]) for r in rows
                if whole(r["fact"], Fact) and (r["neighbour"] is None or whole(r["neighbour"], Entity))]

    def _neighbours(self, tenant_id: str, entity_id: str, predicates: list[str] | None, direction: str,
                    times: tuple[datetime, datetime, datetime], include_superseded: bool, offset: int,
                    limit: int) -> list[dict]:
        """The rows of recall/neighbours; `times` = (now, as_of, known_at), checked arguments."""
        now, as_of, known_at = times
        return self.db.rows("recall/neighbours", warmed=True, tenant_id=tenant_id, entity_id=entity_id,
                            direction=direction, opt={"predicates": predicates}, as_of=as_of, known_at=known_at,
                            now=now, include_superseded=include_superseded, offset=offset, limit=limit)

    def who_at(self, tenant_id: str, org_id: str, *, member_predicate: str = "WORKS_AT",
               predicate: str | None = None, value: str | None = None, object_id: str | None = None,
               via_predicate: str | None = None, via_value: str | None = None, as_of: datetime | None = None,
               known_at: datetime | None = None, offset: int = 0, limit: int = 50,
               org_field: str = "org_id") -> list[Member]:
        """"Who at organisation X has property Y": entities with a `member_predicate` fact to `org_id` valid at
        `as_of`, and (when `predicate` is given) a `predicate` fact whose literal value is `value`, or whose object
        is `object_id`, or whose object has a `via_predicate` fact with value `via_value`, all as known at
        `known_at` (transaction time; default now), each fact shown as it was believed then (`Fact.as_known_at`).
        Example: people currently WORKS_AT Globex who REPORTS_TO the person who HAS_TITLE CFO: `who_at(t, globex,
        predicate="REPORTS_TO", via_predicate="HAS_TITLE", via_value="CFO")`. For a symmetric `predicate` (KNOWS,
        `Predicate.symmetric`) a member may be either end of the fact ("Dana knows Sam": Sam knows Dana), and so for
        a symmetric `member_predicate` ("Dana knows Frank": Frank is a member of "who KNOWS Dana"), and for a symmetric
        `via_predicate` (the property's other end may be either end of the via fact).
        Raises `InvalidInput` (a blank
        `value`, `object_id` or `via_value`, which would otherwise filter nothing or everything; a condition without
        its predicate; a predicate the tenant lacks; a `member_predicate` whose object is a literal value,
        `entity_kinds_of`; a condition that no fact the ontology allows can meet, `_never_matches`, naming the
        condition, or `org_field` for an org of a kind the membership cannot point at) and `NotFound` (an `org_id`
        or `object_id` that is not this tenant's entity, fields `org_field` / object_id)."""
        require_tenant(tenant_id)
        for given, fld in ((value, "value"), (object_id, "object_id"), (via_value, "via_value")):
            if given is not None and blank(given):   # blank: never "no condition", never an empty answer
                raise InvalidInput(f"{fld} {BLANK_WORDS} (leave it out to ask for any)", field=fld)
        if (value is not None or object_id is not None or via_predicate) and not predicate:
            raise InvalidInput("predicate: value, object_id and via_predicate need a predicate", field="predicate")
        if via_value is not None and not via_predicate:
            raise InvalidInput("via_predicate: via_value needs via_predicate", field="via_predicate")
        self.entity_kinds_of(tenant_id, member_predicate, "member_predicate")
        for name, fld in ((predicate, "predicate"), (via_predicate, "via_predicate")):
            self.graph.known_predicates(tenant_id, [name] if name else None, fld, indexed=False)
        org = self.entity(tenant_id, org_id, field=org_field)
        obj = self.entity(tenant_id, object_id, field="object_id") if object_id is not None else None
        onto = self.graph.ontology(tenant_id)
        self._never_matches(onto, org, member_predicate, predicate, value, obj, via_predicate, via_value, org_field)
        asked_known_at = to_utc(known_at, "known_at") if known_at else None
        rows = self._who_at(tenant_id, org_id, member_predicate.upper(), self._times(as_of, known_at), offset, limit,
                            {"predicate": predicate.upper() if predicate else None,
                             "value_key": value_key(value) if value is not None else None, "object_id": object_id,
                             "via_predicate": via_predicate.upper() if via_predicate else None,
                             "via_value_key": value_key(via_value) if via_value is not None else None,
                             "symmetric": bool(predicate) and onto.get(predicate.upper(), "predicate").symmetric,
                             "member_symmetric": onto.get(member_predicate.upper(), "member_predicate").symmetric,
                             "via_symmetric": bool(via_predicate)
                             and onto.get(via_predicate.upper(), "via_predicate").symmetric})
        members = [Member(**r) for r in rows if whole(r["entity"], Entity) and whole(r["membership"], Fact)
                   and (r["property"] is None or whole(r["property"], Fact))]
        for m in members:   # each fact as it was believed at known_at (`Fact.as_known_at`), as `neighbours` shows it
            m.membership = m.membership.as_known_at(asked_known_at)
            m.property = m.property and m.property.as_known_at(asked_known_at)
        return members

    def _who_at(self, tenant_id: str, org_id: str, member_predicate: str, times: tuple[datetime, datetime, datetime],
                offset: int, limit: int, opt: dict) -> list[dict]:
        """The rows of recall/who_at; `times` = (now, as_of, known_at), checked arguments, `opt` the conditions."""
        now, as_of, known_at = times
        return self.db.rows("recall/who_at", warmed=True, tenant_id=tenant_id, org_id=org_id, now=now, as_of=as_of,
                            known_at=known_at, member_predicate=member_predicate, offset=offset, limit=limit, opt=opt)

    @staticmethod
    def _never_matches(onto: Ontology, org: Entity, member_predicate: str, predicate: str | None,
                       value: str | None, obj: Entity | None, via_predicate: str | None, via_value: str | None,
                       org_field: str) -> None:
        """`InvalidInput` naming the condition of `who_at` that no fact the tenant's ontology allows can meet, so
        that the answer would be empty whatever the graph holds: an org of a kind `member_predicate` does not
        point at (a person: "who works at Dana"), `value` and `object_id` or `via_predicate` together (a literal
        and an entity object), a `value` of a predicate whose object is always an entity, an `object_id` or
        `via_predicate` of one whose object is always a value, an `object_id` of a kind the predicate does not
        take, a `via_value` of a `via_predicate` whose object is always an entity."""
        member = onto.get(member_predicate.upper(), "member_predicate")
        if not member.accepts_object(org.kind):
            raise InvalidInput(f"{org_field}: {org.name!r} is of kind {org.kind}; {member.name} points at "
                               f"{', '.join(k for k in member.object_kinds if k != LITERAL)}", field=org_field)
        if value is not None and obj is not None:
            raise InvalidInput("object_id: give value (a literal) or object_id (an entity), not both",
                               field="object_id")
        if value is not None and via_predicate:
            raise InvalidInput("via_predicate: a fact whose value is `value` has no object entity to go via; "
                               "give value or via_predicate, not both", field="via_predicate")
        if predicate:
            p = onto.get(predicate.upper(), "predicate")
            literal_only = all(k == LITERAL for k in p.object_kinds)
            if value is not None and not p.accepts_object(None):
                raise InvalidInput(f"value: {p.name} points at an entity ({', '.join(p.object_kinds)}), never a "
                                   "value; use object_id, or via_predicate and via_value", field="value")
            if obj is not None and not p.accepts_object(obj.kind):
                raise InvalidInput(f"object_id: {p.name} " + ("takes a literal value; use value" if literal_only
                                   else f"points at {', '.join(k for k in p.object_kinds if k != LITERAL)}, not "
                                        f"{obj.kind} {obj.name!r}"), field="object_id")
            if via_predicate and literal_only:
                raise InvalidInput(f"via_predicate: {p.name} takes a literal value, so there is no entity to go via;"
                                   " use value", field="via_predicate")
        if via_predicate and via_value is not None:
            v = onto.get(via_predicate.upper(), "via_predicate")
            if not v.accepts_object(None):
                raise InvalidInput(f"via_value: {v.name} points at an entity ({', '.join(v.object_kinds)}), never "
                                   "a value", field="via_value")


def build(services) -> RecallService:
    """`Services` factory: `services.recall`."""
    return RecallService(services.db, services.graph, services.embedder)
