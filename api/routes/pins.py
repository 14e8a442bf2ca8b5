"""Pin routes: typed session state with optimistic concurrency. A write names the version it read (`If-Match:
"3"` or a `version` field; 0 or none creates); a stale one gets 409. Tenant pin key definitions live here too."""
from __future__ import annotations

import re
from typing import Literal

from fastapi import APIRouter, Header, Query, Response
from pydantic import ConfigDict, Field

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.ids import PinKey, SessionId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.context.pins import Pin, PinKeyDef, PinValue, check_key
from graphmem.errors import InvalidInput
from graphmem.models import Input

router = APIRouter(route_class=UniqueKeysRoute, tags=["pins"])


class PinWrite(Input):
    """A typed value, and the version it replaces (0 or null: create a new pin)."""

    value: PinValue = Field(examples=[{"type": "amount", "value": "129.99"}])
    version: int | None = Field(default=None, ge=0, strict=True, examples=[0])


class PinList(ItemPage[Pin]):
    """A page of a session's pins, by key."""


def _if_match(header: str | None) -> int | None:
    if header is None:
        return None
    m = re.fullmatch(r'\s*(?:W/)?"?(\d{1,18})"?\s*', header)
    if not m:
        raise InvalidInput('If-Match must be a pin version such as "3"', field="If-Match")
    return int(m.group(1))


def _version(header: str | None, body: int | None) -> int | None:
    hv = _if_match(header)
    if hv is not None and body is not None and hv != body:
        raise InvalidInput(f"If-Match ({hv}) and version ({body}) disagree", field="version")
    return hv if hv is not None else body


@router.get("/v1/sessions/{session_id}/pins", response_model=PinList, summary="List a session's pins (by key)")
def list_pins(session_id: SessionId, who: Reader, services: ServicesDep, page: PageDep,
              status: Literal["active", "candidate"] | None = Query(default=None, examples=["active"])) -> PinList:
    services.context.sessions.get(who.tenant_id, session_id)
    items = services.context.pins.list(who.tenant_id, session_id, status=status, offset=page.offset, limit=page.limit)
    return PinList.of(items, page)


@router.get("/v1/sessions/{session_id}/pins/{key}", response_model=Pin, summary="Get a pin (ETag: its version)",
            responses={404: {"description": "no such pin"}})
def get_pin(session_id: SessionId, key: PinKey, who: Reader, services: ServicesDep, response: Response) -> Pin:
    services.context.sessions.get(who.tenant_id, session_id)   # no session: 404 naming session_id, not the key
    pin = services.context.pins.get(who.tenant_id, session_id, key)
    response.headers["ETag"] = f'"{pin.version}"'
    return pin


@router.put("/v1/sessions/{session_id}/pins/{key}", response_model=Pin, status_code=200,
            summary="Create or replace a pin at the version read",
            responses={201: {"description": "created"}, 409: {"description": "stale version: read the pin and retry"}})
def put_pin(session_id: SessionId, key: PinKey, body: PinWrite, who: Writer, services: ServicesDep, response: Response,
            if_match: str | None = Header(default=None, examples=['"3"'])) -> Pin:
    check_key(key)
    pin, created = services.context.pins.put(who.tenant_id, session_id, key, body.value,
                                             _version(if_match, body.version))
    response.status_code = 201 if created else 200
    response.headers["ETag"] = f'"{pin.version}"'
    return pin


@router.delete("/v1/sessions/{session_id}/pins/{key}", status_code=204, summary="Delete a pin at the version read",
               responses={409: {"description": "stale version"}, 404: {"description": "no such pin"}})
def delete_pin(session_id: SessionId, key: PinKey, who: Writer, services: ServicesDep,
               if_match: str | None = Header(default=None, examples=['"3"']),
               version: int | None = Query(default=None, ge=1, examples=[3])) -> Response:
    expected = _version(if_match, version)
    if expected is None:
        raise InvalidInput("deleting a pin needs its version (If-Match header or version query parameter)",
                           field="version")
    services.context.pins.delete(who.tenant_id, session_id, key, expected)
    return Response(status_code=204)


class PinKeyDefIn(PinKeyDef):
    """A pin key definition as sent (unknown fields refused; the stored record carries more). `key` may be left
    out: the path names it."""

    model_config = ConfigDict(extra="forbid")

    key: str | None = Field(default=None, examples=["loyalty_tier"])


@router.put("/v1/pin-keys/{key}", response_model=PinKeyDef, summary="Define a tenant pin key and its type")
def define_pin_key(key: PinKey, body: PinKeyDefIn, who: Writer, services: ServicesDep) -> PinKeyDef:
    if body.key is not None and body.key != key:
        raise InvalidInput("the body's key differs from the path", field="key")
    return services.context.pins.define_key(who.tenant_id, PinKeyDef(**{**body.model_dump(), "key": key}))


class PinKeyList(ItemPage[PinKeyDef]):
    """A page of the tenant's pin key definitions, by key."""


@router.get("/v1/pin-keys", response_model=PinKeyList, summary="The tenant's pin key definitions (by key)")
def list_pin_keys(who: Reader, services: ServicesDep, page: PageDep) -> PinKeyList:
    return PinKeyList.of(services.context.pins.list_keys(who.tenant_id, page.offset, page.limit), page)
