"""The agent loop's two calls: load the window at the start of a turn, append the turn at its end."""
from __future__ import annotations

import time

from fastapi import APIRouter, Response

from api.deps import Reader, ServicesDep, Writer
from api.ids import SessionId
from api.json_body import UniqueKeysRoute
from graphmem.context.models import ContextRequest, TurnIn, TurnResult, Window

router = APIRouter(route_class=UniqueKeysRoute, tags=["turns"])


@router.post("/v1/sessions/{session_id}/context", response_model=Window,
             summary="Load the context window for the next turn (token-budgeted, cited, byte-stable)",
             responses={422: {"description": "bad input, or the system policy alone exceeds budget_tokens "
                                             "(field: budget)"}})
def load_context(session_id: SessionId, body: ContextRequest, who: Reader, services: ServicesDep,
                 response: Response) -> Window:
    started = time.perf_counter()
    window = services.context.assemble(who.tenant_id, session_id, body, read_only=who.role == "analyst")
    response.headers["Server-Timing"] = f"assemble;dur={(time.perf_counter() - started) * 1000:.1f}"
    return window


@router.post("/v1/sessions/{session_id}/turns", response_model=TurnResult, status_code=201,
             summary="Append a turn: episodes, tool results and pin updates (idempotent by key)",
             responses={200: {"description": "replay of a turn already appended under this key"},
                        409: {"description": "a pin update's expected_version is stale"}})
def append_turn(session_id: SessionId, body: TurnIn, who: Writer, services: ServicesDep,
                response: Response) -> TurnResult:
    result = services.context.append_turn(who.tenant_id, session_id, body, agent_id=who.key_id)
    if result.replayed:
        response.status_code = 200
    return result
