"""Episode routes: append one or a batch (idempotent by key; 201 when created, 200 for a replay), read one, list a
session's episodes. Secrets are redacted before storing; each stored episode carries a durable extraction job."""
from __future__ import annotations

from fastapi import APIRouter, Response
from pydantic import BaseModel, Field

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.ids import EpisodeId, SessionId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.models import Episode, EpisodeIn, Input

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1", tags=["episodes"])

EPISODE_EXAMPLE = {"kind": "message", "role": "user", "speaker": "Dana", "session_id": "s-42", "user_id": "u-7",
                   "content": "I moved to Globex last Tuesday as Head of Procurement.",
                   "occurred_at": "2024-05-01T09:00:00Z", "idempotency_key": "turn-42-1"}


class EpisodeBatch(Input):
    episodes: list[EpisodeIn] = Field(min_length=1, max_length=500, examples=[[EPISODE_EXAMPLE]])


class Appended(BaseModel):
    episode: Episode
    created: bool = Field(description="False when the same episode was sent before under its idempotency key (the "
                                      "stored episode is returned); a used key with other content, kind, session, "
                                      "user, role, speaker or source is a 422 naming idempotency_key.")


class BatchAppended(BaseModel):
    items: list[Appended]


class EpisodePage(ItemPage[Episode]):
    """A page of episodes."""


@router.post("/episodes", response_model=Appended, status_code=201, summary="Append an episode",
             responses={200: {"description": "Idempotent replay: the episode stored under this key"}},
             openapi_extra={"requestBody": {"content": {"application/json": {"example": EPISODE_EXAMPLE}}}})
def append(body: EpisodeIn, who: Writer, services: ServicesDep, response: Response) -> Appended:
    episode, created = services.ingest.append_episode(who.tenant_id, body)
    if not created:
        response.status_code = 200
    return Appended(episode=episode, created=created)


@router.post("/episodes/batch", response_model=BatchAppended, status_code=201, summary="Append up to 500 episodes",
             responses={200: {"description": "Every episode was an idempotent replay"}})
def append_batch(body: EpisodeBatch, who: Writer, services: ServicesDep, response: Response) -> BatchAppended:
    out = services.ingest.append_episodes(who.tenant_id, body.episodes)
    if not any(created for _, created in out):
        response.status_code = 200
    return BatchAppended(items=[Appended(episode=e, created=c) for e, c in out])


@router.get("/episodes/{episode_id}", response_model=Episode, summary="Get an episode",
            responses={404: {"description": "No such episode in this tenant"}})
def get_episode(episode_id: EpisodeId, who: Reader, services: ServicesDep) -> Episode:
    return services.graph.get_episode(who.tenant_id, episode_id)


@router.get("/sessions/{session_id}/episodes", response_model=EpisodePage, summary="A session's episodes in order",
            responses={200: {"content": {"application/json": {"example": {"items": [], "offset": 0, "limit": 50}}}}})
def session_episodes(session_id: SessionId, who: Reader, services: ServicesDep, page: PageDep) -> EpisodePage:
    items = services.graph.session_episodes(who.tenant_id, session_id, page.offset, page.limit)
    if not items:
        services.context.sessions.get(who.tenant_id, session_id)   # 404 naming session_id for an unknown session
    return EpisodePage.of(items, page)
