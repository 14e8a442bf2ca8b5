"""Session routes: create, get and list sessions, their summary revisions (list, rollback, compact now), and the
consent flag that lets preferences cross sessions of a user. The tenant is the API key's."""
from __future__ import annotations

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel, Field

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.ids import SessionId as SessionIdPath, UserFilter
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.context.models import CompactionResult, Summary
from graphmem.context.sessions import Consent, ConsentIn, SessionInfo
from graphmem.models import VISIBLE, Input, SessionId, UserIdText

router = APIRouter(route_class=UniqueKeysRoute, tags=["sessions"])


class SessionCreate(Input):
    """A new session for a user (two browser tabs are two sessions). Without `id`, one is generated."""

    id: SessionId | None = Field(default=None, examples=["tab-2f9c"])
    user_id: UserIdText = Field(examples=["u-42"])
    agent_id: str | None = Field(default=None, max_length=200, pattern=VISIBLE, examples=["support-bot"])


class SessionList(ItemPage[SessionInfo]):
    """A page of sessions, most recently active first."""


class SummaryList(ItemPage[Summary]):
    """A page of a session's summary revisions, newest first."""


class RollbackResult(BaseModel):
    current: Summary | None = Field(description="the revision that is current after the rollback (null: none)")


@router.post("/v1/sessions", response_model=SessionInfo, status_code=201, summary="Create a session",
             responses={200: {"description": "the session already existed for this user (returned unchanged)"},
                        409: {"description": "the id belongs to another user's session"}})
def create_session(body: SessionCreate, who: Writer, services: ServicesDep, response: Response) -> SessionInfo:
    if body.id is not None:      # past the retention session TTL, not yet swept: expired first, created afresh
        services.context.expire_if_idle(who.tenant_id, body.id)
    info, created = services.context.sessions.create(who.tenant_id, body.user_id, body.id, body.agent_id)
    if not created:
        response.status_code = 200
    return info


@router.get("/v1/sessions", response_model=SessionList, summary="List sessions (most recently active first)")
def list_sessions(who: Reader, services: ServicesDep, page: PageDep,
                  user_id: UserFilter = None) -> SessionList:
    items = services.context.sessions.list(who.tenant_id, user_id, page.offset, page.limit)
    return SessionList.of(items, page)


@router.get("/v1/sessions/{session_id}", response_model=SessionInfo, summary="Get a session",
            responses={404: {"description": "no such session in this tenant"}})
def get_session(session_id: SessionIdPath, who: Reader, services: ServicesDep) -> SessionInfo:
    return services.context.sessions.get(who.tenant_id, session_id)


@router.get("/v1/sessions/{session_id}/summaries", response_model=SummaryList,
            summary="Summary revisions of a session (newest first, rolled-back ones included)")
def list_summaries(session_id: SessionIdPath, who: Reader, services: ServicesDep, page: PageDep) -> SummaryList:
    services.context.sessions.get(who.tenant_id, session_id)
    items = services.context.summaries.list(who.tenant_id, session_id, page.offset, page.limit)
    return SummaryList.of(items, page)


@router.post("/v1/sessions/{session_id}/summaries/rollback", response_model=RollbackResult,
             summary="Roll back the current summary revision (kept, marked rolled_back)",
             responses={404: {"description": "the session has no active summary"}})
def rollback_summary(session_id: SessionIdPath, who: Writer, services: ServicesDep) -> RollbackResult:
    return RollbackResult(current=services.context.rollback_summary(who.tenant_id, session_id))


@router.post("/v1/sessions/{session_id}/compact", response_model=CompactionResult,
             summary="Compact the session now (normally automatic after a turn)")
def compact(session_id: SessionIdPath, who: Writer, services: ServicesDep,
            force: bool = Query(default=False, description="compact even below the threshold")) -> CompactionResult:
    return services.context.compact_now(who.tenant_id, session_id, force=force)


@router.put("/v1/consent", response_model=Consent, summary="Set whether preferences may cross sessions",
            responses={200: {"content": {"application/json": {"example": {
                "scope": "user", "user_id": "u-42", "share_preferences": True,
                "updated_at": "2024-05-01T09:00:00Z"}}}}})
def set_consent(body: ConsentIn, who: Writer, services: ServicesDep) -> Consent:
    return services.context.sessions.set_consent(who.tenant_id, body)


@router.get("/v1/consent", response_model=list[Consent], summary="Consent records that apply to a user")
def get_consent(who: Reader, services: ServicesDep,
                user_id: UserFilter = None) -> list[Consent]:
    return services.context.sessions.consents(who.tenant_id, user_id)
