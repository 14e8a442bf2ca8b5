"""API keys: each maps to one tenant and one role. Only a SHA-256 hash of the key is stored.

Keys are 32 random bytes (urlsafe base64, prefixed `gm_`), so a plain SHA-256 is a sound verifier
(no password stretching is needed for high-entropy secrets; see NIST SP 800-63B §5.1.1.2 on memorized vs.
look-up secrets). A key is shown once, at creation; listings show only its 8-character prefix.
"""
from __future__ import annotations

import hashlib
import secrets
from typing import Literal

from pydantic import BaseModel

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.governance import audit
from graphmem.models import UtcDatetime, new_id
from graphmem.store import Database, require_named_tenant, require_tenant
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow

Role = Literal["agent", "analyst", "admin"]
ROLES = ("agent", "analyst", "admin")


class ApiKey(BaseModel):
    """A stored key (without its secret)."""

    id: str
    tenant_id: str
    role: Role
    name: str | None = None
    prefix: str
    created_at: UtcDatetime
    revoked_at: UtcDatetime | None = None


class TenantKeys(BaseModel):
    """A tenant that has API keys: how many it has (`keys`) and how many are not revoked (`active`)."""

    tenant_id: str
    keys: int
    active: int


class Principal(BaseModel):
    """Who is calling: the tenant and role a valid key maps to."""

    key_id: str
    tenant_id: str
    role: Role


def hash_key(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


class KeyStore:
    """Create, list, revoke, rotate and check API keys."""

    def __init__(self, db: Database):
        self.db = db

    def create(self, tenant_id: str, role: str, name: str | None = None, *,
               actor: str | None = None) -> tuple[ApiKey, str]:
        """A new key for `tenant_id`. Returns (stored key, secret); the secret is never retrievable again.
        Audited (action `key_create`, target the new key, `actor` the admin key id or "cli") with the key, in one
        transaction. `InvalidInput` (field `tenant_id`) for a tenant id that cannot be a URL path segment
        (`path_segment`: the admin routes name the tenant in the path), (field `role`) for an unknown role."""
        require_named_tenant(tenant_id)
        if role not in ROLES:
            raise InvalidInput(f"role must be one of {ROLES}", field="role")
        return self.db.write(lambda tx: self._create(tx, tenant_id, role, name, "key_create", None, actor))

    @staticmethod
    def _create(tx: Tx, tenant_id: str, role: str, name: str | None, action: str, target: str | None,
                actor: str | None) -> tuple[ApiKey, str]:
        """Store a new key and audit `action` on `target` (the new key when None)."""
        secret, now = "gm_" + secrets.token_urlsafe(32), utcnow()
        key = ApiKey(**tx.one("keys/create", tenant_id=tenant_id, id=new_id(), role=role, name=name,
                              hash=hash_key(secret), prefix=secret[:8], now=now)["key"])
        audit.write(tx, tenant_id, action, "key", target or key.id, {}, now, actor)
        return key, secret

    def list(self, tenant_id: str, offset: int = 0, limit: int = 100) -> list[ApiKey]:
        require_tenant(tenant_id)
        return [ApiKey(**r["key"]) for r in self.db.rows("keys/list", tenant_id=tenant_id, offset=offset, limit=limit)]

    def revoke(self, tenant_id: str, key_id: str, *, actor: str | None = None) -> ApiKey:
        """Revoke a key of `tenant_id` (idempotent; the call that revokes it is audited, action `key_revoke`).
        `NotFound` for an unknown id or another tenant's."""
        require_tenant(tenant_id)

        def work(tx: Tx) -> ApiKey:
            key, revoked_now = self._revoke(tx, tenant_id, key_id)
            if revoked_now:
                audit.write(tx, tenant_id, "key_revoke", "key", key_id, {}, key.revoked_at, actor)
            return key
        return self.db.write(work)

    @staticmethod
    def _revoke(tx: Tx, tenant_id: str, key_id: str) -> tuple[ApiKey, bool]:
        row = tx.one("keys/revoke", tenant_id=tenant_id, id=key_id, now=utcnow())
        if row is None:
            raise NotFound(f"no key {key_id!r}", field="key_id")
        return ApiKey(**row["key"]), row["revoked_now"]

    def rotate(self, tenant_id: str, key_id: str, *, actor: str | None = None) -> tuple[ApiKey, str]:
        """Revoke `key_id` and create a key with the same tenant, role and name, in one transaction (audited,
        action `key_rotate`, target the old key). Returns (new key, secret). `NotFound` for an unknown key;
        `Conflict` (field key_id) for a key already revoked: a revoked key stays revoked, and rotating it would hand
        its access to a new secret (create a key instead)."""
        require_tenant(tenant_id)

        def work(tx: Tx) -> tuple[ApiKey, str]:
            old, revoked_now = self._revoke(tx, tenant_id, key_id)
            if not revoked_now:
                raise Conflict(f"key {key_id!r} was revoked at {old.revoked_at.isoformat()}; create a new key "
                               "instead", field="key_id")
            return self._create(tx, tenant_id, old.role, old.name, "key_rotate", key_id, actor)
        return self.db.write(work)

    def tenants(self, offset: int = 0, limit: int = 50, *, only: str | None = None) -> list[TenantKeys]:
        """Tenants that have a key, by tenant id, `offset`/`limit` paged; with `only`, that tenant alone (if it has
        a key)."""
        return [TenantKeys(**r) for r in self.db.rows("keys/list_tenants", offset=offset, limit=limit, only=only)]

    def authenticate(self, secret: str | None) -> Principal | None:
        """The principal for `secret`, or None when it is missing, unknown or revoked. One auto-commit read
        (`Database.read_one`): with Neo4j down it raises `Unavailable` at once instead of waiting out a managed
        transaction's retries (two minutes), so every authenticated request answers 503 promptly. Every request
        reads it first, so the warm-up plans it (`warmed`)."""
        if not secret:
            return None
        row = self.db.read_one("keys/by_hash", warmed=True, hash=hash_key(secret))
        if row is None or row["revoked_at"] is not None:
            return None
        return Principal(key_id=row["id"], tenant_id=row["tenant_id"], role=row["role"])


def build(services) -> KeyStore:
    """`Services` factory."""
    return KeyStore(services.db)
