"""FastAPI dependencies: services, the calling principal (from the API key) and role checks.

The tenant always comes from the key (`Authorization: Bearer <key>` or `X-API-Key: <key>`), never from the
request body or path. Roles: agent (read and write its tenant), analyst (read only), admin (tenants and keys).
"""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Header, HTTPException, Query, Request

from graphmem.errors import InvalidInput
from graphmem.keys import Principal
from graphmem.services import Services


def get_services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(get_services)]


def _secret(authorization: str | None, x_api_key: str | None) -> str | None:
    if x_api_key:
        return x_api_key.strip()
    if authorization and authorization.lower().startswith("bearer "):
        return authorization[7:].strip()
    return None


def principal(services: ServicesDep,
              authorization: Annotated[str | None, Header(description="Bearer <API key>")] = None,
              x_api_key: Annotated[str | None, Header(description="The API key (alternative to Authorization)")] = None,
              ) -> Principal:
    """The caller, from its API key. 401 when the key is missing, unknown or revoked."""
    secret = _secret(authorization, x_api_key)
    if not secret:
        raise HTTPException(401, "an API key is required (Authorization: Bearer <key> or X-API-Key)")
    who = services.keys.authenticate(secret)
    if who is None:
        raise HTTPException(401, "the API key is unknown or revoked")
    return who


def reader(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """Any role may read its own tenant."""
    return who


def writer(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """agent and admin may write; analyst is read-only (403)."""
    if who.role == "analyst":
        raise HTTPException(403, "this key's role (analyst) is read-only")
    return who


def admin(who: Annotated[Principal, Depends(principal)]) -> Principal:
    """Only admin keys manage tenants and keys (403)."""
    if who.role != "admin":
        raise HTTPException(403, "this route needs an admin key")
    return who


Reader = Annotated[Principal, Depends(reader)]
Writer = Annotated[Principal, Depends(writer)]
Admin = Annotated[Principal, Depends(admin)]


class Page:
    """Pagination for every list route: `offset` (>= 0) and `limit` (1..500, default 50)."""

    def __init__(self, offset: Annotated[int, Query(ge=0, le=1_000_000, description="items to skip")] = 0,
                 limit: Annotated[int, Query(ge=1, le=500, description="items per page")] = 50):
        self.offset, self.limit = offset, limit


PageDep = Annotated[Page, Depends(Page)]


def known_query(request: Request) -> None:
    """Refuse a query parameter the operation does not declare: `InvalidInput` (422) naming it and listing the
    ones it takes. A misspelt filter on a read (`as_off`, `predicates` where the route takes `predicate`) would
    otherwise be dropped and the answer given without it. The declared names are the operation's query
    parameters in the app's OpenAPI document (read once per app)."""
    route = request.scope.get("route")
    if route is None or not request.query_params:
        return
    declared = getattr(request.app.state, "query_names", None)
    if declared is None:
        declared = request.app.state.query_names = {
            (path, method.upper()): {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
            for path, ops in request.app.openapi()["paths"].items() for method, op in ops.items()}
    allowed = declared.get((route.path_format, request.method), set())
    for name in request.query_params:
        if name not in allowed:
            takes = f"it takes {', '.join(sorted(allowed))}" if allowed else "it takes none"
            raise InvalidInput(f"{name}: not a query parameter of {request.method} {route.path_format}; {takes}",
                               field=name)
