"""Legal holds on a user, a session or an episode. A hold blocks erasure (the forget call is refused) and
expiry (held episodes, and facts they support, get no `retain_until` and are never swept) until it is released.
What had already passed its `retain_until` when the hold came keeps that stamp: never swept while held, and hidden
from every read as it was before the hold (a hold keeps from deletion, it does not make readable).
Holds are `LegalHold` nodes; episodes also carry a `legal_hold` flag kept in sync for cheap checks."""
from __future__ import annotations

from datetime import datetime

from graphmem.errors import InvalidInput, NotFound
from graphmem.governance import audit
from graphmem.governance.models import Hold, HoldKind
from graphmem.governance.retention import Retention
from graphmem.identifiers import blank
from graphmem.models import BLANK_WORDS, new_id
from graphmem.store import Database, require_named_tenant, require_tenant
from graphmem.timeutil import utcnow


class Holds:
    """Place, list and release legal holds."""

    def __init__(self, db: Database, retention: Retention):
        self.db, self.retention = db, retention

    def place(self, tenant_id: str, kind: HoldKind, target_id: str, reason: str, *, actor: str | None = None,
              now: datetime | None = None) -> tuple[Hold, bool]:
        """Hold a user, session or episode (idempotent per target). Returns (hold, created).

        Raises `InvalidInput` for an empty reason or target id or (field `tenant_id`) a tenant id no key can have
        (`require_named_tenant`), `NotFound` (field `episode_id`) for an unknown episode. Users and sessions may be
        held before they have data.
        """
        require_named_tenant(tenant_id)
        if not target_id or blank(target_id):
            raise InvalidInput(f"{kind}_id {BLANK_WORDS}", field=f"{kind}_id")
        if not reason or blank(reason):
            raise InvalidInput("a legal hold needs a reason (e.g. a case reference)", field="reason")
        now = now or utcnow()

        def work(tx):
            if kind == "episode" and not tx.rows("episodes/get_many", tenant_id=tenant_id, ids=[target_id]):
                raise NotFound(f"no episode {target_id!r}", field="episode_id")
            row = tx.one("governance/create_hold", tenant_id=tenant_id, target_kind=kind, target_id=target_id,
                         id=new_id(), reason=reason.strip(), now=now)
            if row["created"]:
                audit.write(tx, tenant_id, "hold", kind, target_id, {}, now, actor)
            return Hold(**row["hold"]), row["created"]
        hold, created = self.db.write(work)
        self.retention.sync_holds(tenant_id)
        return hold, created

    def list(self, tenant_id: str, offset: int = 0, limit: int = 50) -> list[Hold]:
        """The tenant's holds, oldest first."""
        require_tenant(tenant_id)
        return [Hold(**r["hold"]) for r in self.db.rows("governance/list_holds", tenant_id=tenant_id,
                                                         offset=offset, limit=limit)]

    def release(self, tenant_id: str, hold_id: str, *, actor: str | None = None, now: datetime | None = None) -> Hold:
        """Release a hold; retention applies again to what it covered. `NotFound` (field `hold_id`) if unknown."""
        require_tenant(tenant_id)
        now = now or utcnow()

        def work(tx):
            row = tx.one("governance/delete_hold", tenant_id=tenant_id, id=hold_id)
            if row is None:
                raise NotFound(f"no legal hold {hold_id!r}", field="hold_id")
            hold = Hold(**row["hold"])
            audit.write(tx, tenant_id, "release", hold.target_kind, hold.target_id, {}, now, actor)
            return hold
        hold = self.db.write(work)
        self.retention.sync_holds(tenant_id)
        return hold
