"""Search and multi-hop recall routes: POST /v1/search, POST /v1/recall, GET /v1/recall/introductions,
GET /v1/recall/who-at. The tenant is the API key's; any role may read."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query
from pydantic import BaseModel, ConfigDict, Field, model_validator

from api.deps import PageDep, QueryInt, Reader, ServicesDep
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.errors import InvalidInput, NotFound
from graphmem.models import VISIBLE, Input, KindName, PredicateName, UtcDatetime, Visible
from graphmem.recall.models import SearchRequest, SearchResponse
from graphmem.recall.paths import MAX_HOPS, Member, Path, PathEntity

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1", tags=["recall"])


class EntitySelector(Input):
    """An entity named by one of `id`, `name` (normalised name or alias) or free text `query` (full-text +
    vector over entities); `kind` narrows a name or query. Unknown fields are refused (a typo is not ignored)."""

    id: str | None = Field(default=None, min_length=1, max_length=200, pattern=VISIBLE, examples=["5f0c..."])
    name: str | None = Field(default=None, min_length=1, max_length=300, pattern=VISIBLE, examples=["Dana Smith"])
    query: str | None = Field(default=None, min_length=1, max_length=2000, pattern=VISIBLE, examples=["the Globex CFO"])
    kind: KindName | None = Field(default=None, examples=["Person"])

    @model_validator(mode="after")
    def _one(self) -> "EntitySelector":
        given = [f for f in ("id", "name", "query") if getattr(self, f) is not None]
        if len(given) != 1:
            raise ValueError("give one of id, name or query" + (f", not {' and '.join(given)}" if given else ""))
        return self


class RecallRequest(Input):
    """Paths of up to `max_hops` facts around `entity` (one shortest path per reachable entity) or, with `other`,
    between the two (the `k` best of the shortest: weakest hop, then recency), over facts valid at `as_of` as known
    at `known_at` (UTC). Unknown fields are refused, and so are numbers sent as anything but JSON integers (`true`
    was taken as 1, `"3"` as 3)."""

    entity: EntitySelector = Field(examples=[{"name": "Dana Smith"}])
    other: EntitySelector | None = Field(default=None, examples=[{"name": "Initech", "kind": "Organization"}])
    max_hops: int = Field(default=3, ge=1, le=MAX_HOPS, strict=True,
                          description="at most 3 around one entity, 4 between two")
    k: int = Field(default=5, ge=1, le=5, strict=True, description="paths between two entities")
    limit: int = Field(default=50, ge=1, le=500, strict=True, description="paths around one entity")
    as_of: UtcDatetime | None = None
    known_at: UtcDatetime | None = None
    predicates: list[PredicateName] | None = Field(default=None, max_length=100, examples=[["KNOWS", "WORKS_AT"]],
                                                   description="walk only facts of these predicates (each joining "
                                                               "two entities)")


class RecallResponse(BaseModel):
    """The paths, and the entities the request's selectors resolved to (a name or free text names one entity:
    this says which)."""

    entity: PathEntity
    other: PathEntity | None = None
    paths: list[Path]


class IntroductionResponse(BaseModel):
    """The best shortest connection (None when none within max_hops: the strongest weakest hop, then the most
    recent), the introducers along it, in order, and the entities `from` and `to` resolved to."""

    model_config = ConfigDict(populate_by_name=True)

    from_: PathEntity = Field(alias="from")
    to: PathEntity
    path: Path | None
    introducers: list[PathEntity] = Field(description="the entities between from and to, in order (id, kind, "
                                                      "name); a path through people is preferred")


class MembersResponse(ItemPage[Member]):
    """Members of the organisation `org` resolved to, one page."""

    org: PathEntity


def _resolve(services, tenant: str, sel: EntitySelector, field: str):
    return services.recall.resolve_entity(tenant, entity_id=sel.id, name=sel.name, query=sel.query, kind=sel.kind,
                                          field=field)


@router.post("/search", response_model=SearchResponse, summary="Hybrid search over facts, episodes and entities",
             responses={200: {"content": {"application/json": {"example": {"hits": [
                 {"kind": "fact", "id": "9b1e...", "text": "Bob Lee reports to Carol Jones", "score": 0.0328,
                  "reasons": ["fulltext rank 1 (score 2.31)", "graph rank 1 (score 1)"], "episode_ids": ["41c2..."]}],
                 "degraded": [{"source": "vector", "reason": "no embedder configured (GRAPHMEM_EMBEDDER=none)"}]}}}}})
def search(body: SearchRequest, who: Reader, services: ServicesDep) -> SearchResponse:
    if not body.mmr and body.mmr_lambda != SearchRequest.model_fields["mmr_lambda"].default:
        raise InvalidInput("mmr_lambda: weighs relevance against diversity only with mmr: true", field="mmr_lambda")
    return services.recall.search(who.tenant_id, body)


def _unused(body: RecallRequest) -> None:
    """422 for an option the request's shape does not use, set to other than its default (which a client may
    send along): `k` ranks paths between two entities, `limit` bounds those around one. Set the other way it
    was dropped, and the answer looked like an answer to it."""
    unused, used = ("k", "limit") if body.other is None else ("limit", "k")
    if getattr(body, unused) != RecallRequest.model_fields[unused].default:
        shape = "around one entity" if body.other is None else "between two entities (with `other`)"
        raise InvalidInput(f"{unused}: not used {shape}; `{used}` bounds the paths there", field=unused)


@router.post("/recall", response_model=RecallResponse, summary="Multi-hop paths around one entity or between two",
             responses={200: {"content": {"application/json": {"example": {
                 "entity": {"id": "a1...", "kind": "Person", "name": "Sam Carter"}, "other": None, "paths": [
                 {"target": {"id": "c3...", "kind": "Person", "name": "Frank Wu"}, "length": 2, "confidence": 1.0,
                  "latest": "2023-06-30T00:00:00Z", "hops": [{"from_name": "Sam Carter", "to_name": "Dana Smith",
                                                              "direction": "out", "fact": {"predicate": "KNOWS"}}]}]}}}}})
def recall(body: RecallRequest, who: Reader, services: ServicesDep) -> RecallResponse:
    _unused(body)
    tenant = who.tenant_id
    a = _resolve(services, tenant, body.entity, "entity")
    b = None
    if body.other is None:
        paths = services.recall.paths_around(tenant, a.id, max_hops=body.max_hops, as_of=body.as_of,
                                             known_at=body.known_at, predicates=body.predicates, limit=body.limit)
    else:
        b = _resolve(services, tenant, body.other, "other")
        paths = services.recall.paths_between(tenant, a.id, b.id, max_hops=body.max_hops, k=body.k,
                                              as_of=body.as_of, known_at=body.known_at, predicates=body.predicates,
                                              fields=("entity", "other"), predicate_field="predicates")
    return RecallResponse(entity=PathEntity.of(a), other=PathEntity.of(b) if b else None, paths=paths)


@router.get("/recall/introductions", response_model=IntroductionResponse,
            summary="Shortest connection between two entities: who can introduce us",
            responses={200: {"content": {"application/json": {"example": {
                "from": {"id": "a1...", "kind": "Person", "name": "Sam Carter"},
                "to": {"id": "d4...", "kind": "Organization", "name": "Initech"},
                "path": {"length": 3}, "introducers": [{"id": "b2...", "kind": "Person", "name": "Dana Smith"},
                                                       {"id": "c3...", "kind": "Person", "name": "Frank Wu"}]}}}}})
def introductions(who: Reader, services: ServicesDep,
                  from_: Annotated[str, Query(alias="from", min_length=1, max_length=300, pattern=VISIBLE,
                                              description="entity id (or name) to start from"), Visible],
                  to: Annotated[str, Query(min_length=1, max_length=300, pattern=VISIBLE,
                                           description="entity id (or name) to reach"), Visible],
                  max_hops: Annotated[QueryInt, Query(ge=1, le=MAX_HOPS)] = 4,
                  as_of: Annotated[UtcDatetime | None, Query()] = None,
                  known_at: Annotated[UtcDatetime | None, Query()] = None,
                  predicate: Annotated[list[PredicateName] | None,
                                       Query(description="Walk only facts with these predicates (repeatable).")]
                  = None) -> IntroductionResponse:
    tenant = who.tenant_id
    a = _by_id_or_name(services, tenant, from_, "from")
    b = _by_id_or_name(services, tenant, to, "to")
    path = services.recall.introduction(tenant, a.id, b.id, max_hops=max_hops, as_of=as_of, known_at=known_at,
                                        predicates=predicate, fields=("from", "to"))
    return IntroductionResponse(from_=PathEntity.of(a), to=PathEntity.of(b), path=path,
                                introducers=[PathEntity(id=h.to_id, kind=h.to_kind, name=h.to_name)
                                             for h in path.hops[:-1]] if path else [])


def _by_id_or_name(services, tenant: str, value: str, field: str, kinds: list[str] = ()):
    """The entity a query parameter (`field`: from, to, org) names by id, else by name, an entity of one of `kinds`
    first (an organisation named like a person); errors name `field`."""
    try:
        return services.recall.entity(tenant, value, field=field)
    except NotFound:
        pass
    for kind in kinds:
        try:
            return services.recall.resolve_entity(tenant, name=value, kind=kind, field=field, query_hint=False)
        except (NotFound, InvalidInput):
            pass
    try:
        return services.recall.resolve_entity(tenant, name=value, field=field, query_hint=False)
    except (NotFound, InvalidInput) as exc:
        raise type(exc)(exc.detail.replace(f"{field}.name:", f"{field}:", 1), field=field) from None


@router.get("/recall/who-at", response_model=MembersResponse,
            summary="Who at organisation X has property Y (e.g. reports to the CFO)",
            responses={200: {"content": {"application/json": {"example": {
                "org": {"id": "b2...", "kind": "Organization", "name": "Globex"}, "items": [
                {"entity": {"name": "Bob Lee"}, "membership": {"predicate": "WORKS_AT"},
                 "property": {"predicate": "REPORTS_TO"}}], "offset": 0, "limit": 50}}}}})
def who_at(who: Reader, services: ServicesDep, page: PageDep,
           org: Annotated[str, Query(min_length=1, max_length=300, pattern=VISIBLE,
                                     description="organisation entity id or name", examples=["Globex"]), Visible],
           member_predicate: Annotated[PredicateName, Query()] = "WORKS_AT",
           predicate: Annotated[PredicateName | None, Query(examples=["REPORTS_TO"])] = None,
           value: Annotated[str | None, Query(min_length=1, max_length=2000, pattern=VISIBLE), Visible] = None,
           object_id: Annotated[str | None, Query(min_length=1, max_length=200, pattern=VISIBLE), Visible] = None,
           via_predicate: Annotated[PredicateName | None, Query(examples=["HAS_TITLE"])] = None,
           via_value: Annotated[str | None, Query(min_length=1, max_length=2000, pattern=VISIBLE,
                                                  examples=["CFO"]), Visible] = None,
           as_of: Annotated[UtcDatetime | None, Query()] = None,
           known_at: Annotated[UtcDatetime | None, Query()] = None) -> MembersResponse:
    tenant = who.tenant_id
    o = _by_id_or_name(services, tenant, org, "org", services.recall.entity_kinds_of(tenant, member_predicate))
    items = services.recall.who_at(tenant, o.id, member_predicate=member_predicate, predicate=predicate, value=value,
                                   object_id=object_id, via_predicate=via_predicate, via_value=via_value,
                                   as_of=as_of, known_at=known_at, offset=page.offset, limit=page.limit,
                                   org_field="org")
    return MembersResponse.of(items, page, org=PathEntity.of(o))
