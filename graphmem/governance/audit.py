"""Audit records of governance actions (erasure, sweeps, holds). They never hold erased content: the target is
a SHA-256 hash of "tenant:kind:id" and the counts are numbers."""
from __future__ import annotations

import hashlib
import json
from datetime import datetime

from graphmem.governance.models import AuditRecord
from graphmem.models import new_id
from graphmem.store import Database, require_tenant
from graphmem.store.db import Tx


def target_hash(tenant_id: str, kind: str, target_id: str) -> str:
    """SHA-256 (hex) of "tenant:kind:id": lets an auditor confirm that a known id was erased without the
    record holding the id."""
    return hashlib.sha256(f"{tenant_id}:{kind}:{target_id}".encode()).hexdigest()


def _record(row: dict) -> AuditRecord:
    r = dict(row["record"])
    r["counts"] = json.loads(r.get("counts") or "{}")
    return AuditRecord(**r)


def write(tx: Tx, tenant_id: str, action: str, target_kind: str, target_id: str | None, counts: dict[str, int],
          at: datetime, actor: str | None = None) -> AuditRecord:
    """Write one audit record inside the caller's transaction (so the record and the action commit together)."""
    row = tx.one("governance/write_audit", tenant_id=tenant_id, id=new_id(), action=action, target_kind=target_kind,
                 target_hash=target_hash(tenant_id, target_kind, target_id) if target_id else None,
                 counts=json.dumps(counts, sort_keys=True), actor=actor, at=at)
    return _record(row)


def list_records(db: Database, tenant_id: str, offset: int = 0, limit: int = 50) -> list[AuditRecord]:
    """The tenant's audit records, newest first."""
    require_tenant(tenant_id)
    return [_record(r) for r in db.rows("governance/list_audit", tenant_id=tenant_id, offset=offset, limit=limit)]
