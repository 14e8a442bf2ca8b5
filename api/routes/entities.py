"""Entity routes for analysts and agents: GET /v1/entities (search by name/kind, paginated),
GET /v1/entities/{id}, GET /v1/entities/{id}/neighbourhood, GET /v1/entities/{id}/paths/{other_id}.
The tenant is the API key's; another tenant's id answers 404 like an unknown one."""
from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query
from pydantic import BaseModel

from api.deps import PageDep, QueryInt, Reader, ServicesDep
from api.ids import EntityId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.models import KIND_RE, Entity, PredicateName, UtcDatetime
from graphmem.errors import InvalidInput
from graphmem.recall.paths import MAX_HOPS, Neighbour, Path

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/entities", tags=["entities"])

ENTITY_EXAMPLE = {"id": "5f0c...", "tenant_id": "acme", "kind": "Person", "name": "Dana Smith",
                  "name_key": "dana smith", "aliases": [], "created_at": "2024-05-01T09:00:00Z",
                  "updated_at": "2024-05-01T09:00:00Z"}


class EntityPage(ItemPage[Entity]):
    """A page of entities."""


class NeighbourPage(ItemPage[Neighbour]):
    """A page of an entity's neighbours (one fact away)."""


class PathList(BaseModel):
    paths: list[Path]


@router.get("", response_model=EntityPage, summary="Find entities by name (full-text over names and aliases) and kind",
            responses={200: {"content": {"application/json": {"example": {"items": [ENTITY_EXAMPLE], "offset": 0,
                                                                          "limit": 50}}}}})
def list_entities(who: Reader, services: ServicesDep, page: PageDep,
                  name: Annotated[str | None, Query(max_length=300, examples=["Dana"],
                                                    description="entities whose name or an alias is this name "
                                                    "(normalised; oldest first), then full-text matches over names "
                                                    "and aliases")] = None,
                  kind: Annotated[str | None, Query(examples=["Person"])] = None) -> EntityPage:
    if kind is not None and not KIND_RE.match(kind):
        raise InvalidInput("kind must be a PascalCase word such as Person", field="kind")
    items = services.recall.find_entities(who.tenant_id, name, kind, page.offset, page.limit)
    return EntityPage.of(items, page)


@router.get("/{entity_id}", response_model=Entity, summary="One entity",
            responses={200: {"content": {"application/json": {"example": ENTITY_EXAMPLE}}}})
def get_entity(entity_id: EntityId, who: Reader, services: ServicesDep) -> Entity:
    return services.recall.get_entity(who.tenant_id, entity_id)


@router.get("/{entity_id}/neighbourhood", response_model=NeighbourPage,
            summary="Facts one hop from the entity, by predicate and direction, valid at as_of",
            description="By predicate, then oldest valid_from first (then recorded_at, id), as GET /v1/facts.",
            responses={200: {"content": {"application/json": {"example": {"items": [
                {"direction": "in", "fact": {"predicate": "REPORTS_TO", "statement": "Bob Lee reports to Carol Jones"},
                 "neighbour": {"name": "Bob Lee"}, "episode_ids": ["41c2..."]}], "offset": 0, "limit": 50}}}}})
def neighbourhood(entity_id: EntityId, who: Reader, services: ServicesDep, page: PageDep,
                  predicate: Annotated[list[PredicateName] | None, Query(examples=["REPORTS_TO"])] = None,
                  direction: Annotated[Literal["in", "out", "both"], Query()] = "both",
                  as_of: Annotated[UtcDatetime | None, Query(description=(
                      "Valid time (UTC); default now. Not with include_superseded, which lists every version "
                      "(a 422 naming as_of)."))] = None,
                  known_at: Annotated[UtcDatetime | None, Query(description="Transaction time (UTC); default now.")
                                      ] = None,
                  include_superseded: Annotated[bool, Query(description=(
                      "Every version known at known_at, whatever its valid time: ended, superseded, retracted or "
                      "not yet started."))] = False) -> NeighbourPage:
    items = services.recall.neighbours(who.tenant_id, entity_id, predicates=predicate, direction=direction,
                                       as_of=as_of, known_at=known_at, include_superseded=include_superseded,
                                       offset=page.offset, limit=page.limit)
    return NeighbourPage.of(items, page)


@router.get("/{entity_id}/paths/{other_id}", response_model=PathList,
            summary="The k best shortest paths between two entities over facts valid at as_of",
            responses={200: {"content": {"application/json": {"example": {"paths": [{"length": 2, "hops": []}]}}}}})
def paths(entity_id: EntityId, other_id: EntityId, who: Reader, services: ServicesDep,
          max_hops: Annotated[QueryInt, Query(ge=1, le=MAX_HOPS)] = 3,
          k: Annotated[QueryInt, Query(ge=1, le=5)] = 5,
          as_of: Annotated[UtcDatetime | None, Query()] = None,
          known_at: Annotated[UtcDatetime | None, Query()] = None,
          predicate: Annotated[list[PredicateName] | None, Query()] = None) -> PathList:
    return PathList(paths=services.recall.paths_between(who.tenant_id, entity_id, other_id, max_hops=max_hops, k=k,
                                                        as_of=as_of, known_at=known_at, predicates=predicate,
                                                        fields=("entity_id", "other_id")))
