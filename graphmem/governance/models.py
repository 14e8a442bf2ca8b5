"""Shapes of governance records: retention settings, legal holds, receipts, audit records and user memories.

All times are aware UTC datetimes; TTLs and retention periods are whole days.
"""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from graphmem.models import Fact, Input, UtcDatetime

HoldKind = Literal["user", "session", "episode"]
TargetKind = Literal["user", "session", "episode", "fact"]
Days = int | None
TtlDays = Annotated[int | None, Field(ge=1, le=36500, strict=True)]
"""A retention period in days (1-36500), or None for none; out of range, or a JSON string or float instead of a
whole number, is a validation error at its key."""

EXPIRY_KINDS = ("episodes", "facts", "facts_kept", "entities", "aliases", "external_ids", "summaries", "pins",
                "sessions", "refusals", "turn_receipts")
"""What the cascade counts in both modes, erasure (forget) and expiry (the sweeper)."""
ERASURE_KINDS = EXPIRY_KINDS + ("consents", "facts_reopened", "facts_extended", "links_repaired", "entities_renamed")
"""Kinds every erasure (forget) receipt lists, zero or not (docs/governance.md), so a client can index any of them."""
SWEEP_KINDS = ("hold_flags_changed", "stamped_facts", "stamped_episodes") + EXPIRY_KINDS
"""Kinds every sweep receipt (and a sweep's totals) lists, zero or not (docs/governance.md)."""


def every_kind(kinds: tuple[str, ...], counts: dict[str, int]) -> dict[str, int]:
    """A receipt's counts: every kind of `kinds` (0 when not counted) and any other kind `counts` holds, sorted by
    kind. The one way erasure and sweep receipts are filled, so a client can index any documented kind."""
    return {k: counts.get(k, 0) for k in sorted(set(kinds) | set(counts))}


class RetentionSettings(Input):
    """A tenant's retention policy. `None` means "keep until erased" (no expiry).

    - `episode_retention_days`: an episode expires this many days after it was stored (`ingested_at`).
    - `session_ttl_days`: a session idle this many days (since `last_active_at`) expires with its episodes,
      pins and summaries.
    - `fact_class_ttl_days`: per fact class overrides of the ontology's TTL (days after the fact was last
      asserted); a class that is not listed keeps the ontology default; `null` removes the TTL.
    """

    episode_retention_days: Days = Field(default=None, ge=1, le=36500, strict=True, examples=[30])
    session_ttl_days: Days = Field(default=None, ge=1, le=36500, strict=True, examples=[90])
    # each value checked at its own key, so a 422 names `fact_class_ttl_days.<class>`
    fact_class_ttl_days: dict[str, TtlDays] = Field(default_factory=dict,
                                                    examples=[{"activity": 14, "preference": 365}])


class RetentionView(RetentionSettings):
    """The stored settings plus the TTL each fact class gets in effect (override, else ontology default)."""

    tenant_id: str
    version: int = 0
    updated_at: UtcDatetime | None = None
    effective_fact_class_ttl_days: dict[str, Days] = Field(default_factory=dict)
    recomputed: dict[str, int] = Field(default_factory=dict, description="records whose retain_until was recomputed")


class Hold(BaseModel):
    """A legal hold on a user, a session or an episode: blocks erasure and expiry of what it covers."""

    id: str
    tenant_id: str
    target_kind: HoldKind
    target_id: str
    reason: str
    created_at: UtcDatetime


class Receipt(BaseModel):
    """What an erasure or a sweep removed: counts by kind, every kind listed even when 0 (`ERASURE_KINDS` for
    forget, `SWEEP_KINDS` for a sweep), when (UTC) and the audit record written for it (none for a sweep that
    removed nothing)."""

    action: Literal["forget", "sweep", "reject"]
    target_kind: TargetKind | Literal["tenant"]
    counts: dict[str, int]
    at: UtcDatetime
    audit_id: str | None = None


class SweepReceipt(BaseModel):
    """A sweep over one or more tenants: one receipt per tenant that had anything to do (the tenant a sweep names
    always has one), and the totals, by every kind of `SWEEP_KINDS` like each receipt."""

    at: UtcDatetime
    tenants: dict[str, Receipt] = Field(default_factory=dict)
    totals: dict[str, int] = Field(default_factory=dict)


class AuditRecord(BaseModel):
    """An audit record. It never holds erased content: the target is `target_hash` = SHA-256 of
    "tenant:kind:id" (so a known id can be checked against it), `counts` are numbers only."""

    id: str
    tenant_id: str
    action: str
    target_kind: str
    target_hash: str | None = None
    counts: dict[str, int]
    actor: str | None = None
    at: UtcDatetime


class ProvenanceNote(BaseModel):
    """One source of a user's fact, with a readable line ("learned on 2024-05-01 from episode X, source S,
    confidence C"). The date is the episode's `occurred_at` (UTC)."""

    episode_id: str
    occurred_at: UtcDatetime
    recorded_at: UtcDatetime | None = None
    source: str | None = None
    confidence: float | None = None
    role: str | None = None
    session_id: str | None = None
    episode_kind: str | None = None
    text: str


class Memory(BaseModel):
    """A fact as its user sees it: the fact, its names, and where it came from. `other_sources` counts
    supporting episodes that are not this user's (not shown); `expired_sources` counts source episodes
    that retention has removed."""

    fact: Fact
    subject_name: str | None = None
    object_name: str | None = None
    provenance: list[ProvenanceNote]
    other_sources: int = 0
    expired_sources: int = 0


class MemoryPage(BaseModel):
    """A page of memories (newest first) and how many there are in all."""

    items: list[Memory]
    total: int
    offset: int
    limit: int
