"""Durable extraction jobs. The job is the `Episode` node itself (DESIGN.md principle 8: accepted means durable):

    pending --claim--> running --> done | skipped | failed (permanent) | dead (after N attempts)
       ^                  |
       +--- retry later --+   (transient error: attempts < max; not_before = now + backoff)

A claim sets `claimed_by`, a random `claim_token` and `lease_until`; a running job whose lease expired is claimable
again (crash-resume). Finishing a job requires its claim token, so a worker that lost its lease cannot finish it.
All functions take a `Tx` (one transaction) or a `Database` and the tenant id; times are aware UTC datetimes.
"""
from __future__ import annotations

import random
import time
from datetime import datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, Field

from graphmem.errors import Conflict, NotFound
from graphmem.models import Episode, ExtractionStatus, UtcDatetime, new_id
from graphmem.store import Database
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow


class Job(BaseModel):
    """An extraction job as callers see it (the job fields of its episode)."""

    episode_id: str = Field(examples=["3f2b9c0e8d7a4b6c9e1f2a3b4c5d6e7f"])
    kind: str = Field(examples=["message"])
    status: ExtractionStatus = Field(examples=["dead"])
    reason: str | None = Field(default=None, examples=["LLM unavailable after 4 attempts: 503 upstream overloaded"])
    attempts: int = Field(default=0, examples=[5])
    claimed_by: str | None = None
    lease_until: UtcDatetime | None = None
    not_before: UtcDatetime | None = Field(default=None, description="Earliest retry time (UTC).")
    claimed_at: UtcDatetime | None = None
    finished_at: UtcDatetime | None = None
    ingested_at: UtcDatetime | None = None
    extractor: str | None = Field(default=None, examples=["llm", "mapping:crm"])
    prompt_version: str | None = Field(default=None, examples=["extract_v2"])
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = Field(default=0.0, description="Estimated LLM cost in US dollars.")
    facts_asserted: int = 0
    facts_refused: int = 0
    facts_retracted: int = Field(default=0, description="Facts closed by the job's retractions (CRM fields set to "
                                 "null, a deal's previous owner displaced by a new one, an extracted fact that "
                                 "ended); status \"retracted\".")
    disambiguation_mentions: int = Field(default=0, description="Ambiguous entity mentions sent to the LLM in the "
                                         "job's one disambiguation call (0: no call was made).")
    disambiguation_linked: int = Field(default=0, description="Of those mentions, how many the LLM linked to an "
                                       "existing entity (the rest were left to the deterministic resolver).")
    disambiguation_prompt_version: str | None = Field(default=None, examples=["disambiguate_v1"],
                                                      description="Prompt of the disambiguation call, if one was made.")
    recovered_from_crash: bool = Field(default=False, description="Last claimed from a worker whose lease expired.")

    @classmethod
    def from_row(cls, r: dict[str, Any]) -> "Job":
        return cls(episode_id=r["id"], kind=r["kind"], status=r["extraction_status"], reason=r.get("extraction_reason"),
                   attempts=r.get("attempts") or 0, claimed_by=r.get("claimed_by"), lease_until=r.get("lease_until"),
                   not_before=r.get("not_before"), claimed_at=r.get("claimed_at"), finished_at=r.get("finished_at"),
                   ingested_at=r.get("ingested_at"), extractor=r.get("extractor"),
                   prompt_version=r.get("extraction_prompt_version"), llm_calls=r.get("llm_calls") or 0,
                   prompt_tokens=r.get("llm_prompt_tokens") or 0,
                   completion_tokens=r.get("llm_completion_tokens") or 0, cost_usd=r.get("llm_cost_usd") or 0.0,
                   facts_asserted=r.get("facts_asserted") or 0, facts_refused=r.get("facts_refused") or 0,
                   facts_retracted=r.get("facts_retracted") or 0,
                   disambiguation_mentions=r.get("disambiguation_mentions") or 0,
                   disambiguation_linked=r.get("disambiguation_linked") or 0,
                   disambiguation_prompt_version=r.get("disambiguation_prompt_version"),
                   recovered_from_crash=bool(r.get("recovered_from_crash")))


class Claim(BaseModel):
    """A job this worker holds: the episode, its claim token and the attempt number (1-based)."""

    tenant_id: str
    episode: Episode
    token: str
    attempt: int
    recovered: bool = False


def backoff_s(attempt: int, base_s: float, cap_s: float) -> float:
    """Delay before retry number `attempt` (1-based): base * 2^(attempt-1), capped, with "full jitter" in [d/2, d]
    (AWS Architecture Blog, "Exponential Backoff And Jitter", 2015, equal-jitter variant)."""
    d = min(cap_s, base_s * 2 ** max(0, attempt - 1))
    return d / 2 + random.uniform(0, d / 2)


def tenants_with_work(db: Database, limit: int = 100) -> list[str]:
    """Up to `limit` tenant ids with claimable jobs (for an unscoped worker): due jobs whose episode is within
    retention now, as the claim takes them (cypher jobs/tenants_with_work)."""
    return [r["tenant_id"] for r in db.rows("jobs/tenants_with_work", now=utcnow(), limit=limit)]


def claim(db: Database, tenant_id: str, worker_id: str, limit: int, lease_s: float, *, rounds: int = 5) -> list[Claim]:
    """Atomically claim up to `limit` due jobs of the tenant (one write query; see cypher/jobs/claim.cypher).

    When every candidate was won by a concurrent claimer, tries again (up to `rounds` times) while due jobs remain
    (cypher jobs/has_due, with the claim's retention condition), so an empty result means the tenant's queue had
    nothing due.
    """
    for _ in range(rounds):
        now = utcnow()
        token = new_id()
        rows = db.execute("jobs/claim", tenant_id=tenant_id, worker_id=worker_id, token=token, now=now,
                          lease_until=now + timedelta(seconds=lease_s), limit=limit, window=limit)
        if rows:
            return [Claim(tenant_id=tenant_id, episode=Episode(**r["episode"]), token=token,
                          attempt=r["episode"]["attempts"], recovered=bool(r["episode"].get("recovered_from_crash")))
                    for r in rows]
        if not (db.one("jobs/has_due", tenant_id=tenant_id, now=utcnow()) or {}).get("due"):
            return []
        time.sleep(random.uniform(0.001, 0.02))
    return []


class PastRetention(Exception):
    """The job's episode passed its retention (its own `retain_until`, or its session's idle TTL) after the claim:
    its content is neither sent to the LLM nor written to the graph. The worker puts the job back to pending (the
    attempt not counted) and leaves the episode for the sweeper."""


def holds(tx: Tx, claim_: Claim) -> bool:
    """Lock the job and tell whether `claim_` still holds it (call first in the transaction writing its facts).
    Raises `PastRetention` when it does but the episode is past retention now (cypher jobs/fence, the condition of
    jobs/get), so that transaction writes nothing of it."""
    row = tx.one("jobs/fence", tenant_id=claim_.tenant_id, id=claim_.episode.id, token=claim_.token, now=utcnow())
    if not (row and row["held"]):
        return False
    if not row["retained"]:
        raise PastRetention(claim_.episode.id)
    return True


def finish(tx: Tx, claim_: Claim, status: Literal["done", "skipped", "failed", "dead", "pending"], *,
           reason: str | None = None, not_before: datetime | None = None, attempts_delta: int = 0,
           stats: dict[str, Any] | None = None, usage: Any = None) -> bool:
    """End the claim with `status`; False if the claim was lost (another worker took the job over).
    `usage` (a `graphmem.ingest.llm.Usage`) is added to the job's LLM totals; `stats` properties are set."""
    u = {"calls": getattr(usage, "calls", 0), "prompt_tokens": getattr(usage, "prompt_tokens", 0),
         "completion_tokens": getattr(usage, "completion_tokens", 0), "cost_usd": float(getattr(usage, "cost_usd", 0.0))}
    row = tx.one("jobs/finish", tenant_id=claim_.tenant_id, id=claim_.episode.id, token=claim_.token, status=status,
                 reason=reason, not_before=not_before, attempts_delta=attempts_delta, now=utcnow(), stats=stats or {},
                 usage=u)
    return row is not None


def renew(db: Database, tenant_id: str, claims: list[Claim], lease_s: float) -> int:
    """Extend the leases of `claims` (heartbeat); returns how many are still held."""
    if not claims:
        return 0
    rows = db.execute("jobs/renew", tenant_id=tenant_id, lease_until=utcnow() + timedelta(seconds=lease_s),
                      rows=[{"id": c.episode.id, "token": c.token} for c in claims])
    return len(rows)


def get(db: Database, tenant_id: str, episode_id: str) -> Job:
    """The job of episode `episode_id`; `NotFound` (field `episode_id`) if the tenant has no such episode, or it is
    past retention (its own, or its session's idle TTL), as every read of the episode answers."""
    row = db.one("jobs/get", tenant_id=tenant_id, id=episode_id, now=utcnow())
    if row is None:
        raise NotFound(f"no extraction job for episode {episode_id!r}", field="episode_id")
    return Job.from_row(row["job"])


def retained(db: Database, tenant_id: str, episode_id: str) -> bool:
    """Whether episode `episode_id` is still there and within retention now (its own `retain_until`, its session's
    idle TTL: the condition of the claim and of every read, cypher jobs/get). The worker asks right before it sends
    the episode's content to the LLM: a job claimed just before its episode passed retention sends nothing."""
    return db.one("jobs/get", tenant_id=tenant_id, id=episode_id, now=utcnow()) is not None


def failed(db: Database, tenant_id: str, offset: int = 0, limit: int = 50) -> list[Job]:
    """Failed and dead-lettered jobs, most recent first; none of an episode past retention (its own, or its
    session's idle TTL)."""
    return [Job.from_row(r["job"]) for r in db.rows("jobs/failed", tenant_id=tenant_id, offset=offset, limit=limit,
                                                    now=utcnow())]


EXPLICIT_FACTS = "explicit facts"
"""The reason of the skipped job of an episode that records a caller's explicit facts (`POST /v1/facts`): there is
nothing to extract from it, so it is never retried."""


def retry(db: Database, tenant_id: str, episode_id: str) -> Job:
    """Re-queue a failed, dead or skipped job with a fresh attempt budget. `NotFound` (field `episode_id`: no such
    episode, or one past retention, which stays as it is); `Conflict` if it is pending, running or done, or is the
    record of explicit facts (`EXPLICIT_FACTS`)."""
    if not db.execute("jobs/retry", tenant_id=tenant_id, id=episode_id, now=utcnow(), explicit=EXPLICIT_FACTS):
        job = get(db, tenant_id, episode_id)
        if job.status == "skipped" and job.reason == EXPLICIT_FACTS:
            raise Conflict(f"job {episode_id} records explicit facts: there is nothing to extract, so nothing to "
                           "retry", field="episode_id")
        raise Conflict(f"job {episode_id} is {job.status}; only failed, dead or skipped jobs can be retried",
                       field="episode_id")
    return get(db, tenant_id, episode_id)


def annotate(db: Database, tenant_id: str, reasons: dict[str, str]) -> None:
    """Record why jobs ended at intake ({episode_id: reason}, e.g. "chatter")."""
    if reasons:
        db.execute("jobs/annotate", tenant_id=tenant_id, now=utcnow(),
                   rows=[{"id": k, "reason": v} for k, v in reasons.items()])


def counts(db: Database, tenant_id: str) -> dict[str, int]:
    """Jobs per status for the tenant ({status: jobs}, a status without jobs left out); as every read of a job
    (`get`, `failed`, the claim), none of an episode past retention (its own, or its session's)."""
    return {r["status"]: r["jobs"] for r in db.rows("jobs/counts", tenant_id=tenant_id, now=utcnow())}


def usage(db: Database, tenant_id: str) -> dict[str, float]:
    """The tenant's extraction LLM usage: jobs, llm_calls, prompt_tokens, completion_tokens, cost_usd (USD), summed
    over its jobs that made LLM calls; as `counts`, none of an episode past retention (its own, or its session's)."""
    r = db.one("jobs/usage", tenant_id=tenant_id, now=utcnow()) or {}
    return {k: (r.get(k) or 0) for k in ("jobs", "llm_calls", "prompt_tokens", "completion_tokens", "cost_usd")}
