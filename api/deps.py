"""FastAPI dependencies: services, the calling principal (from the API key) and role checks.

The tenant always comes from the key (`Authorization: Bearer <key>` or `X-API-Key: <key>`), never from the
request body or path. Roles: agent (read and write its tenant), analyst (read only), admin (keys, retention, holds
and audit: of its own tenant, or of every tenant for the operator's admin keys, those of tenant `admin`).
"""
from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import Depends, Header, HTTPException, Query, Request
from pydantic import BeforeValidator

from api.request_shape import check_request_shape
from graphmem.errors import NotFound
from graphmem.keys import Principal
from graphmem.ops import BOOTSTRAP_TENANT
from graphmem.services import Services
from graphmem.store import require_named_tenant


def get_services(request: Request) -> Services:
    return request.app.state.services


ServicesDep = Annotated[Services, Depends(get_services)]


def _secret(authorization: list[str], x_api_key: list[str]) -> str | None:
    """The API key a request sends, from `X-API-Key` or `Authorization: Bearer` (each header's every value: a
    header may be sent more than once). Two different keys, one in each header or twice in one, are a 401: which
    tenant the caller means is then a guess, and a valid key beside a bad one would hide the bad one."""
    bearers = {a[7:].strip() for a in authorization if a.lower().startswith("bearer ")} - {""}
    keys = {k.strip() for k in x_api_key} - {""}
    if len(bearers | keys) > 1:
        where = ("Authorization and X-API-Key" if bearers and keys
                 else "Authorization, twice" if bearers else "X-API-Key, twice")
        raise HTTPException(401, f"two different API keys were sent ({where}); send one")
    return next(iter(keys or bearers), None)


def principal(request: Request, services: ServicesDep,
              authorization: Annotated[str | None, Header(description="Bearer <API key>")] = None,
              x_api_key: Annotated[str | None, Header(description="The API key (alternative to Authorization)")] = None,
              ) -> Principal:
    """The caller, from its API key (`authorization` and `x_api_key` document the headers; every value of each is
    read from `request`). 401 when the key is missing, unknown or revoked, or when two different keys are sent."""
    secret = _secret(request.headers.getlist("authorization"), request.headers.getlist("x-api-key"))
    if not secret:
        if any(a.strip() and not a.strip().lower().startswith("bearer")    # a key without "Bearer ", say
               for a in request.headers.getlist("authorization")):
            raise HTTPException(401, "the Authorization header was sent without the Bearer scheme: it takes "
                                     "'Bearer <key>' (or send the key as X-API-Key)")
        raise HTTPException(401, "an API key is required (Authorization: Bearer <key> or X-API-Key)")
    who = services.keys.authenticate(secret)
    if who is None:
        raise HTTPException(401, "the API key is unknown or revoked")
    return who


def _may_write(who: Principal) -> None:
    if who.role == "analyst":
        raise HTTPException(403, "this key's role (analyst) is read-only")


def _is_admin(who: Principal) -> None:
    if who.role != "admin":
        raise HTTPException(403, "this route needs an admin key")


async def reader(request: Request, who: Annotated[Principal, Depends(principal)]) -> Principal:
    """Any role may read its own tenant. Then the request's shape is checked (`check_request_shape`): an
    unknown query parameter or a body the route does not take is a 422, after 401 and 403."""
    await check_request_shape(request)
    return who


async def writer(request: Request, who: Annotated[Principal, Depends(principal)]) -> Principal:
    """agent and admin may write; analyst is read-only (403). Then the request's shape is checked."""
    _may_write(who)
    await check_request_shape(request)
    return who


async def admin(request: Request, who: Annotated[Principal, Depends(principal)]) -> Principal:
    """Only admin keys manage tenants and keys (403). Then the request's shape is checked."""
    _is_admin(who)
    await check_request_shape(request)
    return who


OPERATOR_TENANT = BOOTSTRAP_TENANT
"""The tenant whose admin keys manage every tenant (the operator's: `GRAPHMEM_BOOTSTRAP_ADMIN_KEY` makes its first
key). An admin key of any other tenant manages that tenant only."""


def operates(who: Principal) -> bool:
    """Whether `who` is the operator: an admin key of `OPERATOR_TENANT`."""
    return who.role == "admin" and who.tenant_id == OPERATOR_TENANT


def tenant_admin(tenant_id: str, who: Annotated[Principal, Depends(admin)]) -> Principal:
    """An admin key that manages the tenant the path names (`tenant_id`): the operator's manage every tenant, any
    other tenant's admin its own only. Another tenant's id is a 404 naming `tenant_id`, as another tenant's ids are
    everywhere: an admin of one tenant cannot manage, read or even probe another. A tenant id no key can have
    (`require_named_tenant`: blank, surrounding whitespace, control characters, over 200 characters) is a 422
    naming `tenant_id` for every admin route, reads included: there is nothing to read there."""
    require_named_tenant(tenant_id)
    if not operates(who) and tenant_id != who.tenant_id:
        raise NotFound(f"no tenant {tenant_id!r} that this key manages", field="tenant_id")
    return who


def authorize(request: Request) -> Principal:
    """The key (401) and role (403) checks of the matched route's dependencies, for a request refused before they
    ran: FastAPI parses a JSON body first, so a body that is not JSON would otherwise be a 422 to any caller.
    Raises `HTTPException` 401 / 403; blocking (reads the key), so call it in a thread pool."""
    who = principal(request, request.app.state.services)
    route = request.scope.get("route")
    pending = list(getattr(route, "dependant", None) and route.dependant.dependencies or [])
    calls = set()
    while pending:
        dep = pending.pop()
        calls.add(dep.call)
        pending.extend(dep.dependencies)
    if admin in calls:
        _is_admin(who)
    elif writer in calls:
        _may_write(who)
    return who


Reader = Annotated[Principal, Depends(reader)]
Writer = Annotated[Principal, Depends(writer)]
Admin = Annotated[Principal, Depends(admin)]
TenantAdmin = Annotated[Principal, Depends(tenant_admin)]


def _decimal(value: Any) -> Any:
    """A query string's integer as it is written: decimal digits, a minus sign at most. Pydantic's lax int also
    reads "2.0", "2_0" (as 20), " 2" and "+2", none of which a client means as a count. Raises `ValueError` (a 422
    naming the parameter)."""
    if isinstance(value, str) and not re.fullmatch(r"-?[0-9]+", value):
        raise ValueError("must be a whole number in decimal digits, such as 3")
    return value


QueryInt = Annotated[int, BeforeValidator(_decimal)]
"""An integer query parameter (`?limit=`, `?max_hops=`): decimal digits only (`_decimal`); bounds as its `Query`."""


class Page:
    """Pagination for every list route: `offset` (>= 0) and `limit` (1..500, default 50)."""

    def __init__(self, offset: Annotated[QueryInt, Query(ge=0, le=1_000_000, description="items to skip")] = 0,
                 limit: Annotated[QueryInt, Query(ge=1, le=500, description="items per page")] = 50):
        self.offset, self.limit = offset, limit


PageDep = Annotated[Page, Depends(Page)]
