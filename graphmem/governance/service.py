"""`Governance`: the governance service (`services.governance`): retention, legal holds, erasure, the sweeper,
audit and user-visible memories, each in its own module; this class only wires them together."""
from __future__ import annotations

from datetime import datetime

from graphmem.governance import audit
from graphmem.governance.erasure import Eraser
from graphmem.governance.holds import Holds
from graphmem.governance.memories import Memories
from graphmem.governance.models import AuditRecord, Receipt, SweepReceipt
from graphmem.governance.retention import Retention
from graphmem.governance.sweeper import Sweeper
from graphmem.graph import TemporalGraph
from graphmem.settings import Settings
from graphmem.store import Database


class Governance:
    """Parts: `retention` (settings, retain_until stamps), `holds` (legal holds), `eraser` (the cascade),
    `sweeper` (physical removal of expired data), `memories` (what users see and change)."""

    def __init__(self, db: Database, settings: Settings, graph: TemporalGraph):
        self.db = db
        self.retention = Retention(db, graph)
        self.holds = Holds(db, self.retention)
        self.eraser = Eraser(db, graph)
        self.sweeper = Sweeper(db, settings, self.retention, self.eraser)
        self.memories = Memories(db, graph, self.eraser)

    def forget(self, tenant_id: str, *, user_id: str | None = None, session_id: str | None = None,
               episode_id: str | None = None, fact_id: str | None = None, actor: str | None = None,
               now: datetime | None = None) -> Receipt:
        """Erase a user, a session, an episode or a fact (exactly one); see `Eraser.forget`."""
        return self.eraser.forget(tenant_id, user_id=user_id, session_id=session_id, episode_id=episode_id,
                                  fact_id=fact_id, actor=actor, now=now)

    def sweep(self, tenant_id: str | None = None, now: datetime | None = None) -> SweepReceipt:
        """Remove expired data of one tenant (or all, with None) at `now`; see `Sweeper.sweep`."""
        return self.sweeper.sweep(tenant_id, now)

    def audit_records(self, tenant_id: str, offset: int = 0, limit: int = 50) -> list[AuditRecord]:
        """The tenant's audit records, newest first."""
        return audit.list_records(self.db, tenant_id, offset, limit)


def build(services) -> Governance:
    """`Services` factory (`services.governance`)."""
    return Governance(services.db, services.settings, services.graph)
