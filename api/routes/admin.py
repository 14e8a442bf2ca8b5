"""Admin routes: tenants and API keys. Admin keys only. The operator's admin keys (tenant `admin`) manage the keys
of any tenant the path names; another tenant's admin keys manage their own tenant's (another tenant's id is a 404:
`api.deps.tenant_admin`). This is the one place a tenant id appears in a path, and only admins reach it."""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from api.deps import Admin, PageDep, ServicesDep, TenantAdmin, operates
from api.ids import KeyId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.keys import ApiKey, TenantKeys
from graphmem.models import VISIBLE, Input

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/admin", tags=["admin"])


class KeyCreate(Input):
    role: Literal["agent", "analyst", "admin"] = Field(examples=["agent"])
    name: str | None = Field(default=None, max_length=200, pattern=VISIBLE, examples=["support-bot"])


class KeyCreated(BaseModel):
    key: ApiKey
    secret: str = Field(description="The API key. Shown once; store it now.")


class KeyList(ItemPage[ApiKey]):
    """A page of a tenant's API keys (never their secrets)."""


class TenantList(ItemPage[TenantKeys]):
    """A page of the tenants that have API keys, by tenant id."""


@router.get("/tenants", response_model=TenantList, summary="Tenants that have keys (by tenant id)",
            responses={200: {"content": {"application/json": {"example": {
                "items": [{"tenant_id": "acme", "keys": 2, "active": 1}], "offset": 0, "limit": 50}}}}})
def tenants(who: Admin, services: ServicesDep, page: PageDep) -> TenantList:
    """Every tenant with keys for the operator; the key's own tenant for another tenant's admin."""
    only = None if operates(who) else who.tenant_id
    return TenantList.of(services.keys.tenants(page.offset, page.limit, only=only), page)


@router.post("/tenants/{tenant_id}/keys", status_code=201, response_model=KeyCreated, summary="Create a key")
def create_key(tenant_id: str, body: KeyCreate, who: TenantAdmin, services: ServicesDep) -> KeyCreated:
    key, secret = services.keys.create(tenant_id, body.role, body.name, actor=who.key_id)
    return KeyCreated(key=key, secret=secret)


@router.get("/tenants/{tenant_id}/keys", response_model=KeyList, summary="List keys (secrets are never shown)")
def list_keys(tenant_id: str, _: TenantAdmin, services: ServicesDep, page: PageDep) -> KeyList:
    return KeyList.of(services.keys.list(tenant_id, page.offset, page.limit), page)


@router.post("/tenants/{tenant_id}/keys/{key_id}/revoke", response_model=ApiKey, summary="Revoke a key")
def revoke_key(tenant_id: str, key_id: KeyId, who: TenantAdmin, services: ServicesDep) -> ApiKey:
    return services.keys.revoke(tenant_id, key_id, actor=who.key_id)


@router.post("/tenants/{tenant_id}/keys/{key_id}/rotate", response_model=KeyCreated, status_code=201,
             summary="Rotate a key: revoke it and issue a new one with the same role",
             responses={409: {"description": "the key was already revoked (a revoked key stays revoked)"}})
def rotate_key(tenant_id: str, key_id: KeyId, who: TenantAdmin, services: ServicesDep) -> KeyCreated:
    key, secret = services.keys.rotate(tenant_id, key_id, actor=who.key_id)
    return KeyCreated(key=key, secret=secret)
