"""Governance routes: forget (erasure cascade), retention settings, legal holds, the sweeper and the audit log.

`POST /v1/forget` is for agent and admin keys and works in the key's tenant. The admin routes name the tenant in
the path (as the key routes do) and need an admin key of that tenant, or the operator's (`api.deps.tenant_admin`).
"""
from __future__ import annotations

from fastapi import APIRouter, HTTPException
from pydantic import Field, model_validator

from api.deps import Admin, PageDep, ServicesDep, TenantAdmin, Writer, operates
from api.ids import HoldId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.errors import InvalidInput, NotFound
from graphmem.governance.models import (ERASURE_KINDS, SWEEP_KINDS, AuditRecord, Hold, Receipt, RetentionSettings,
                                        RetentionView, SweepReceipt, every_kind)
from graphmem.models import Id, Input, UserIdText
from graphmem.store import require_named_tenant

router = APIRouter(route_class=UniqueKeysRoute, tags=["governance"])

# The examples list every kind a receipt lists (the receipts' own kinds, filled the receipts' way), so they cannot
# drift from what the routes answer.
RECEIPT_EXAMPLE = {"action": "forget", "target_kind": "user", "at": "2024-05-01T09:00:00Z", "audit_id": "9f1c...",
                   "counts": every_kind(ERASURE_KINDS, {"episodes": 12, "facts": 7, "facts_kept": 1, "entities": 3,
                                                        "aliases": 4, "external_ids": 1, "summaries": 1, "pins": 2,
                                                        "sessions": 2, "turn_receipts": 5, "consents": 1,
                                                        "facts_reopened": 1})}
SWEEP_COUNTS_EXAMPLE = every_kind(SWEEP_KINDS, {"stamped_facts": 7, "episodes": 40, "facts": 3, "facts_kept": 2,
                                                "summaries": 1})


class ForgetRequest(Input):
    """Exactly one target."""

    user_id: UserIdText | None = Field(default=None, examples=["user-42"])
    session_id: Id | None = None
    episode_id: Id | None = None
    fact_id: Id | None = None

    @model_validator(mode="after")
    def _one(self) -> "ForgetRequest":
        if sum(v is not None for v in (self.user_id, self.session_id, self.episode_id, self.fact_id)) != 1:
            raise InvalidInput("give exactly one of user_id, session_id, episode_id or fact_id", field="user_id")
        return self


@router.post("/v1/forget", response_model=Receipt, summary="Forget a user, a session, an episode or a fact",
             description="Erases the target and everything derived only from it (see docs/governance.md). "
                         "Refused (422, field named) while a legal hold covers it.",
             responses={200: {"content": {"application/json": {"example": RECEIPT_EXAMPLE}}}})
def forget(body: ForgetRequest, who: Writer, services: ServicesDep) -> Receipt:
    return services.governance.forget(who.tenant_id, user_id=body.user_id, session_id=body.session_id,
                                      episode_id=body.episode_id, fact_id=body.fact_id, actor=who.key_id)


@router.get("/v1/admin/tenants/{tenant_id}/retention", response_model=RetentionView,
            summary="A tenant's retention settings and effective fact-class TTLs",
            responses={200: {"content": {"application/json": {"example": {
                "tenant_id": "acme", "episode_retention_days": 30, "session_ttl_days": 90,
                "fact_class_ttl_days": {"activity": 14}, "version": 2,
                "effective_fact_class_ttl_days": {"activity": 14, "preference": 365, "employment": None}}}}}})
def get_retention(tenant_id: str, _: TenantAdmin, services: ServicesDep) -> RetentionView:
    return services.governance.retention.settings(tenant_id)


@router.put("/v1/admin/tenants/{tenant_id}/retention", response_model=RetentionView,
            summary="Replace a tenant's retention settings (recomputes retain_until of its facts and episodes)")
def put_retention(tenant_id: str, body: RetentionSettings, who: TenantAdmin, services: ServicesDep) -> RetentionView:
    return services.governance.retention.update(tenant_id, body, actor=who.key_id)


class HoldRequest(Input):
    """Exactly one target, and the reason (e.g. a case reference)."""

    user_id: UserIdText | None = Field(default=None, examples=["user-42"])
    session_id: Id | None = None
    episode_id: Id | None = None
    reason: str = Field(min_length=1, max_length=1000, examples=["litigation hold, case 2024-17"])

    @model_validator(mode="after")
    def _one(self) -> "HoldRequest":
        if sum(v is not None for v in (self.user_id, self.session_id, self.episode_id)) != 1:
            raise InvalidInput("give exactly one of user_id, session_id or episode_id", field="user_id")
        return self


class HoldList(ItemPage[Hold]):
    """A page of a tenant's legal holds."""


@router.post("/v1/admin/tenants/{tenant_id}/holds", response_model=Hold, status_code=201,
             summary="Place a legal hold on a user, a session or an episode (blocks erasure and expiry)",
             responses={201: {"content": {"application/json": {"example": {
                 "id": "4b2e...", "tenant_id": "acme", "target_kind": "user", "target_id": "user-42",
                 "reason": "litigation hold, case 2024-17", "created_at": "2024-05-01T09:00:00Z"}}}}})
def place_hold(tenant_id: str, body: HoldRequest, who: TenantAdmin, services: ServicesDep) -> Hold:
    kind = "user" if body.user_id else ("session" if body.session_id else "episode")
    target = body.user_id or body.session_id or body.episode_id
    return services.governance.holds.place(tenant_id, kind, target, body.reason, actor=who.key_id)[0]


@router.get("/v1/admin/tenants/{tenant_id}/holds", response_model=HoldList, summary="A tenant's legal holds")
def list_holds(tenant_id: str, _: TenantAdmin, services: ServicesDep, page: PageDep) -> HoldList:
    return HoldList.of(services.governance.holds.list(tenant_id, page.offset, page.limit), page)


@router.delete("/v1/admin/tenants/{tenant_id}/holds/{hold_id}", response_model=Hold,
               summary="Release a legal hold (retention applies again)")
def release_hold(tenant_id: str, hold_id: HoldId, who: TenantAdmin, services: ServicesDep) -> Hold:
    return services.governance.holds.release(tenant_id, hold_id, actor=who.key_id)


class SweepRequest(Input):
    """Name one tenant, or ask for every tenant explicitly."""

    tenant_id: str | None = Field(default=None, min_length=1, max_length=200, examples=["acme"])
    all_tenants: bool = Field(default=False, strict=True)

    @model_validator(mode="after")
    def _one(self) -> "SweepRequest":
        if (self.tenant_id is None) == (not self.all_tenants):
            raise InvalidInput("give tenant_id, or all_tenants: true (not both)", field="tenant_id")
        if self.tenant_id is not None:
            require_named_tenant(self.tenant_id)   # one no key can have: a 422, as the /tenants/{id} routes say
        return self


@router.post("/v1/admin/sweep", response_model=SweepReceipt, summary="Run the sweeper now (removes expired data)",
             responses={200: {"content": {"application/json": {"example": {
                 "at": "2024-05-01T09:00:00Z", "totals": SWEEP_COUNTS_EXAMPLE,
                 "tenants": {"acme": {"action": "sweep", "target_kind": "tenant", "at": "2024-05-01T09:00:00Z",
                                      "audit_id": "5d0a...", "counts": SWEEP_COUNTS_EXAMPLE}}}}}}})
def sweep(body: SweepRequest, who: Admin, services: ServicesDep) -> SweepReceipt:
    """One tenant (an admin's own, or any for the operator) or, for the operator only, every tenant."""
    if not operates(who):
        if body.all_tenants:
            raise HTTPException(403, "all_tenants needs an operator key (an admin key of tenant 'admin')")
        if body.tenant_id != who.tenant_id:
            raise NotFound(f"no tenant {body.tenant_id!r} that this key manages", field="tenant_id")
    return services.governance.sweep(body.tenant_id)


class AuditList(ItemPage[AuditRecord]):
    """A page of a tenant's governance audit records, newest first."""


@router.get("/v1/admin/tenants/{tenant_id}/audit", response_model=AuditList,
            summary="A tenant's governance audit records, newest first (no erased content)")
def audit_log(tenant_id: str, _: TenantAdmin, services: ServicesDep, page: PageDep) -> AuditList:
    return AuditList.of(services.governance.audit_records(tenant_id, page.offset, page.limit), page)
