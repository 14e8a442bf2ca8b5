"""Request and reply shapes of the context service (window assembly, the turn append, summaries).

The API (`api/routes/turns.py`, `sessions.py`, `pins.py`) uses these models directly.
"""
from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from graphmem.context.assembly import Dropped, WindowPiece
from graphmem.context.pins import PinValue
from graphmem.identifiers import blank
from graphmem.models import (VISIBLE, Degraded, EpisodeKind, Input, Spoken, UserIdText, UtcDatetime, VisibleText,
                             json_content)


class ToolSchema(Input):
    """A tool the agent may call: name, description, JSON-schema parameters."""

    name: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$", examples=["issue_refund"])
    description: str = Field(default="", max_length=4000, examples=["Refund an order to the original payment method"])
    parameters: dict[str, Any] = Field(default_factory=dict, examples=[{"type": "object", "properties": {
        "order_id": {"type": "string"}, "amount": {"type": "string"}}}])

    @field_validator("parameters")
    @classmethod
    def _unicode(cls, v: dict[str, Any]) -> dict[str, Any]:
        """Refuse a string holding a lone UTF-16 surrogate ("\\ud800") anywhere in the schema: the window that
        renders it could not be encoded as the reply (a 500); the other strings of a request are checked as
        unicode by `Input`."""
        try:
            json.dumps(v, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError("holds a string with a lone UTF-16 surrogate (not unicode text)") from None
        except (TypeError, ValueError) as exc:   # an in-process caller's non-JSON value
            raise ValueError(f"is not JSON ({exc})") from None
        return v


class DocumentIn(Input):
    """A retrieved document the caller wants cited (not dumped): a snippet of `text` enters the window."""

    id: str = Field(min_length=1, max_length=200, pattern=r"^\S(.*\S)?$", examples=["kb-refund-policy"],
                    description="no surrounding whitespace (citations name the document by it), not blank")
    title: str | None = Field(default=None, max_length=300, examples=["Refund policy"])
    source: str | None = Field(default=None, max_length=500, examples=["https://kb.example.com/refunds"])
    text: str = Field(min_length=1, max_length=200_000, pattern=VISIBLE,
                      examples=["Refunds above 100 EUR need a manager approval."])

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if blank(v):
            raise ValueError("must not be blank: an id of invisible characters cannot be told apart in a citation")
        return v


class ContextRequest(Input):
    """Load the window at the start of a turn. `budget_tokens` is counted with tiktoken for `model` (a JSON
    integer: `true` or `"100"` is refused). Text fields that are given must hold more than whitespace; tool names
    and document ids are unique."""

    query: str = Field(default="", max_length=8000, description="the user's latest message or the step's intent",
                       examples=["where is my refund for order A-10293?"])
    budget_tokens: int = Field(ge=1, le=2_000_000, strict=True, examples=[4000])
    model: str = Field(default="gpt-4o-mini", min_length=1, max_length=100, pattern=VISIBLE, examples=["gpt-4o-mini"])
    system_policy: str = Field(min_length=1, max_length=200_000, pattern=VISIBLE, description="not only whitespace",
                               examples=["You are the support agent of Acme. Never promise refunds above 500 EUR."])
    goal: str | None = Field(default=None, max_length=8000, pattern=VISIBLE, examples=["Refund order A-10293"])
    constraints: list[Annotated[VisibleText, Field(min_length=1, max_length=8000)]] = Field(
        default_factory=list, max_length=100, examples=[["refund to the original card"]])
    tools: list[ToolSchema] = Field(default_factory=list, max_length=500)
    documents: list[DocumentIn] = Field(default_factory=list, max_length=100)
    as_of: UtcDatetime | None = Field(default=None, description="retrieved facts valid at this time (UTC)")
    user_id: UserIdText | None = Field(default=None,
                                       description="the user, when the session does not exist yet (for preferences)")

    @field_validator("tools")
    @classmethod
    def _unique_tools(cls, v: list[ToolSchema]) -> list[ToolSchema]:
        names = [t.name for t in v]
        if len(set(names)) != len(names):
            raise ValueError("tool names must be unique")
        return v

    @field_validator("documents")
    @classmethod
    def _unique_documents(cls, v: list[DocumentIn]) -> list[DocumentIn]:
        ids = [d.id for d in v]
        if len(set(ids)) != len(ids):   # a citation names a document by its id
            raise ValueError("document ids must be unique")
        return v


class Window(BaseModel):
    """The assembled window. `text` is what to send to the model; `pieces` lists every placed piece (tier, tokens,
    citations); `dropped` what was left out and why; `degraded` the sources that failed. Byte-stable for the same
    state: nothing here depends on the time of the request."""

    session_id: str
    model: str
    encoding: str
    exact_tokens: bool = Field(description="false when the model's own encoding was not available offline and "
                                           "cl100k_base stood in (counts are then estimates)")
    budget_tokens: int
    total_tokens: int
    tier_tokens: dict[str, int]
    text: str
    pieces: list[WindowPiece]
    dropped: list[Dropped]
    degraded: list[Degraded]
    summary_rev: int | None = None
    window_reset_at: UtcDatetime | None = Field(default=None, description="when the session's window last started "
                                                "afresh because the session passed its TTL")
    notes: list[str] = Field(default_factory=list)
    pin_versions: dict[str, int] = Field(default_factory=dict, description=(
        "the version of each of the session's pins as this window read them, candidates compaction proposed "
        "included: the `expected_version` of the next turn's pin update, without reading the pin first"))


class TurnEpisode(Spoken):
    """One episode of a turn: a user or assistant message, a tool result, an event. `content` and
    `idempotency_key` hold more than whitespace; `source` defaults by `role` (`graphmem.models.Spoken`)."""

    kind: EpisodeKind = "message"
    role: str | None = Field(default=None, max_length=50, pattern=VISIBLE, examples=["user"])
    speaker: str | None = Field(default=None, max_length=200, pattern=VISIBLE)
    content: str = Field(min_length=1, pattern=VISIBLE, examples=["I want a refund for order A-10293"])
    occurred_at: UtcDatetime = Field(examples=["2024-05-01T09:00:00Z"])
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200, pattern=VISIBLE)
    source: Literal["user_explicit", "user_confirmed", "inferred", "system"] = Field(
        default="user_explicit", description="default by role: user -> user_explicit, assistant -> inferred, "
                                             "tool or system -> system")

    @field_validator("content")
    @classmethod
    def _json_is_json(cls, v: str, info: ValidationInfo) -> str:
        return json_content(v, info)


class PinUpdate(Input):
    """A pin write in a turn: a typed value (or `delete`) at the version the agent read (0/None: a new pin)."""

    key: str = Field(examples=["order_id"])
    value: PinValue | None = None
    delete: bool = Field(default=False, strict=True)
    expected_version: int | None = Field(default=None, ge=0, strict=True, examples=[0])
    episode_index: int | None = Field(default=None, ge=0, strict=True, description="which episode of this turn set it "
                                      "(default: the last)")


class TurnIn(Input):
    """Append a turn at its end: episodes and pin updates, idempotent by `idempotency_key`."""

    idempotency_key: str = Field(min_length=1, max_length=200, pattern=VISIBLE, examples=["turn-7f3a"])
    user_id: UserIdText = Field(examples=["u-42"])
    agent_version: str | None = Field(default=None, max_length=100, examples=["support-bot 2.3.1"])
    prompt_version: str | None = Field(default=None, max_length=100, examples=["refunds-v7"])
    tool_version: str | None = Field(default=None, max_length=100, examples=["tools-2024-05"])
    episodes: list[TurnEpisode] = Field(default_factory=list, max_length=200)
    pins: list[PinUpdate] = Field(default_factory=list, max_length=200)


class TurnResult(BaseModel):
    """What a turn append did. `replayed` is true when the key was seen before (the first reply is returned)."""

    session_id: str
    episode_ids: list[str]
    created: list[bool]
    pins: dict[str, int | None] = Field(description="pin key -> new version (null: deleted)")
    compaction_scheduled: bool
    window_reset: bool = Field(default=False, description="the session had passed its TTL: its window starts afresh")
    replayed: bool = False


class Summary(BaseModel):
    """A summary revision of a session's older turns (a view, lower trust than pins and raw turns)."""

    id: str
    session_id: str
    rev: int
    text: str
    covers_from: str = Field(description="first episode id the summary (with its earlier revisions) covers")
    covers_to: str = Field(description="last episode id covered")
    covers_from_at: UtcDatetime
    covers_to_at: UtcDatetime
    model: str = Field(description="LLM model, or 'extractive-v1' for the deterministic fallback")
    prompt_version: str | None = None
    fallback_reason: str | None = None
    status: Literal["active", "rolled_back"] = "active"
    tokens: int
    source_tokens: int = Field(description="tokens of the raw turns this revision compacted (plus the previous text)")
    created_at: UtcDatetime
    covers: int | None = Field(default=None, description="episodes this revision itself covers")


class CompactionResult(BaseModel):
    """One compaction run: the new revision (None when nothing needed compacting), and the pin candidates."""

    summary: Summary | None = None
    compacted_episodes: int = 0
    remaining_episodes: int = Field(default=0, description=(
        "Older turns this run left raw because its fold reached `compaction_max_fold_tokens`; the next run folds "
        "them (a background compaction runs again at once)."))
    pin_candidates: list[str] = Field(default_factory=list)
    reason: str = ""
