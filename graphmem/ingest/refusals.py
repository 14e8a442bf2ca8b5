"""Write-policy refusals: recorded as `Refusal` nodes (reason, field, episode, predicate, time; never the refused
content) and listable per tenant. A refusal's id is derived from (episode, field, reason, predicate), so a retried
job records it once."""
from __future__ import annotations

import hashlib

from pydantic import BaseModel, Field

from graphmem.ingest.policy import PolicyRefusal
from graphmem.models import UtcDatetime
from graphmem.store import Database
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow


class Refusal(BaseModel):
    """A recorded refusal."""

    id: str
    reason: str = Field(examples=["secret"], description="secret, secret_redacted, oversized, low_confidence, "
                        "unknown_predicate, invalid_date, invalid_fact, invalid_name, self_reference, "
                        "temporal_rule, unknown_entity, invalid_reference, incomplete_value, email_taken")
    field: str = Field(examples=["facts[0].value"])
    detail: str = Field(examples=["the fact contains a secret and is never stored"])
    episode_id: str | None = None
    predicate: str | None = None
    created_at: UtcDatetime


def refusal_id(r: PolicyRefusal, scope: str = "") -> str:
    """Deterministic id: sha256 of episode, field, reason, predicate (and `scope`), first 32 hex characters."""
    raw = "\x1f".join([scope, r.episode_id or "", r.field, r.reason, r.predicate or ""])
    return hashlib.sha256(raw.encode()).hexdigest()[:32]


def _rows(refusals: list[PolicyRefusal], scope: str) -> list[dict]:
    return [{"id": refusal_id(r, scope), "reason": r.reason, "field": r.field, "detail": r.detail,
             "episode_id": r.episode_id, "predicate": r.predicate} for r in refusals]


def record(db: Database, tenant_id: str, refusals: list[PolicyRefusal], scope: str = "") -> list[str]:
    """Store `refusals` in their own transaction; returns their ids."""
    if not refusals:
        return []
    return db.write(lambda tx: record_tx(tx, tenant_id, refusals, scope))


def record_tx(tx: Tx, tenant_id: str, refusals: list[PolicyRefusal], scope: str = "") -> list[str]:
    """Store `refusals` inside the caller's transaction; returns their ids."""
    rows = _rows(refusals, scope)
    if rows:
        tx.run("policy/record_batch", tenant_id=tenant_id, now=utcnow(), rows=rows)
    return [r["id"] for r in rows]


def list_(db: Database, tenant_id: str, offset: int = 0, limit: int = 50) -> list[Refusal]:
    """The tenant's refusals, newest first (`offset`/`limit` count refusals); none of an episode past retention (its
    own, or its session's idle TTL), as every read leaves the episode out before the sweeper removes both."""
    return [Refusal(**r["refusal"]) for r in db.rows("policy/list", tenant_id=tenant_id, offset=offset, limit=limit,
                                                     now=utcnow())]
