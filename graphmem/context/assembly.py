"""Context-window assembly: the pure tier walk, and the deterministic rendering of each piece.

Tier order (DESIGN.md "Context assembly", from seed 000 "Budget order"): system policy, goal and constraints,
tool schemas (a routed subset when they do not all fit), pins, recent turns (the tail), summaries of older turns,
retrieved facts and episodes (cited), documents (cited snippets).

`fit` walks the tiers in that order and, inside a tier, the candidates in priority order. A candidate that does
not fit in what is left of the budget is skipped (listed in `dropped` with the reason) and the walk goes on (a raw
turn between two placed ones leaves a one-line marker with its size and episode id instead of a silent gap, and the
raw turns stay contiguous from the newest: none is placed older than one left out unmarked); a
later tier never takes room from an earlier one, because earlier tiers are placed first and nothing placed is
ever removed for a later piece. If the system policy alone does not fit, `fit` refuses (`InvalidInput`, field
`budget`). Each tier renders as a heading line followed by its pieces in the tier's render order (the tail:
newest kept first, rendered oldest first). Rendering never includes the current time, sorts everything it
iterates, and uses canonical JSON, so the same state gives the same bytes (prompt caches hit).

Token counts come from a counter with `count(text) -> int` and `truncate(text, n) -> str` (graphmem.tokens);
`TokenCounter.count` memoises counts per encoding and text, so a piece that repeats from turn to turn (tools,
pins, raw turns, the summary, the policy, the headings) is encoded once.
Pieces start with a non-space character and end with one newline, so tiktoken's pre-tokenizer splits between
them and the window's count is the sum of the pieces' counts; `fit` recounts the final text only when that sum
comes within one token per piece of the budget (or a piece is empty), and then drops the lowest-priority pieces if
boundary effects ever made it exceed the budget.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Literal, Protocol

from pydantic import BaseModel, Field

from graphmem.errors import InvalidInput

Tier = Literal["system", "goal", "tools", "pins", "recent", "summaries", "retrieved", "documents"]
TIERS: tuple[Tier, ...] = ("system", "goal", "tools", "pins", "recent", "summaries", "retrieved", "documents")
HEADERS: dict[str, str] = {
    "system": "## System policy\n",
    "goal": "## Goal and constraints\n",
    "tools": "## Tools\n",
    "pins": "## Pinned facts (typed; authoritative over anything below)\n",
    "recent": "## Recent turns (raw, oldest first)\n",
    "summaries": "## Earlier in this session (generated summary; lower trust than pins and raw turns)\n",
    "retrieved": "## Retrieved memory (cited)\n",
    "documents": "## Documents (cited snippets)\n",
}
ELLIPSIS = " [...]\n"
SIZE = "{tokens}"
"""The placeholder of a `Candidate.stand_in` for the size in tokens of the text it stands in for."""


class Counter(Protocol):
    """What `fit` needs from a token counter (graphmem.tokens.TokenCounter)."""

    def count(self, text: str) -> int: ...

    def truncate(self, text: str, max_tokens: int) -> str: ...


class Citation(BaseModel):
    """Where a piece comes from: a fact (with the episodes it was derived from), an episode, a summary, a pin or a
    document. `date` is the fact's valid_from or the episode's occurred_at (UTC); `source` the provenance source
    (user_explicit, inferred, ...) or the document's source."""

    kind: Literal["fact", "episode", "summary", "pin", "document", "tool"]
    id: str
    episode_ids: list[str] = Field(default_factory=list)
    date: datetime | None = None
    source: str | None = None


class WindowPiece(BaseModel):
    """One placed piece. `tokens` includes the tier heading for the first piece placed in a tier; `truncated`: its
    text is cut (a document snippet shorter than the document, ending in "[...]") or a marker stands in for it."""

    tier: Tier
    id: str
    tokens: int
    citations: list[Citation] = Field(default_factory=list)
    text: str
    truncated: bool = False


class Dropped(BaseModel):
    """A candidate left out, with its size in tokens (None if never counted; with the tier heading when it would
    have been the tier's first piece, as `WindowPiece.tokens` and the reason's "needs N tokens" count it) and why."""

    tier: Tier
    id: str
    tokens: int | None = None
    reason: str


@dataclass(frozen=True)
class Candidate:
    """A piece offered to `fit`. `order` sorts the placed pieces of a tier for rendering; `min_tokens` > 0 lets a
    piece be cut (with an ellipsis) to fit, down to that many tokens (document snippets); `stand_in`, when given,
    is placed instead of a text that does not fit (a one-line marker, so a raw turn left out leaves no silent gap
    between the turns around it; its last `SIZE` becomes the text's size in tokens), as a `truncated` piece. When
    neither fits, the tier stops there: the candidates after it (older turns) are dropped, never placed past a gap
    nothing marks."""

    tier: Tier
    id: str
    text: str
    citations: tuple[Citation, ...] = ()
    order: tuple = ()
    min_tokens: int = 0
    note: str = ""
    stand_in: str = ""
    truncated: bool = False   # the text is already a cut (a document's snippet): its piece says so


@dataclass
class Assembled:
    """The result of `fit`: pieces in render order, dropped candidates, the window text and its token count."""

    pieces: list[WindowPiece]
    dropped: list[Dropped]
    text: str
    total_tokens: int
    tier_tokens: dict[str, int] = field(default_factory=dict)


def _clean(text: str) -> str:
    """Piece text: no leading/trailing whitespace, exactly one final newline."""
    return text.strip() + "\n"


def fit(candidates: dict[str, Sequence[Candidate]], budget: int, counter: Counter) -> Assembled:
    """Walk the tiers in `TIERS` order and place candidates while they fit in `budget` tokens.

    `candidates[tier]` is in priority order (best first); `candidates["system"]` must hold exactly one piece.
    Raises `InvalidInput` (field `budget_tokens`) when the budget is not positive or the system policy alone does not fit.
    Never returns a window whose text counts more than `budget` tokens.
    """
    if budget < 1:
        raise InvalidInput("budget must be a positive number of tokens", field="budget_tokens")
    system = list(candidates.get("system", ()))
    if len(system) != 1:
        raise InvalidInput("a window needs exactly one system policy", field="system_policy")
    need = counter.count(HEADERS["system"]) + counter.count(_clean(system[0].text))
    if need > budget:
        raise InvalidInput(f"the system policy alone needs {need} tokens but the budget is {budget}; raise budget "
                           f"or shorten the policy", field="budget_tokens")
    used = 0
    placed: dict[str, list[tuple[Candidate, WindowPiece]]] = {t: [] for t in TIERS}
    dropped: list[Dropped] = []
    for tier in TIERS:
        header = counter.count(HEADERS[tier])
        stood_in: dict[str, int] = {}   # candidate id -> size of the text a placed marker stands in for
        cut = False                     # a candidate with a stand-in left out without trace: the rest follow it
        for cand in candidates.get(tier, ()):
            if cut:
                dropped.append(Dropped(tier=tier, id=cand.id, tokens=None,
                                       reason="older than a turn left out of the window" + cand.note))
                continue
            text = _clean(cand.text)
            tokens = counter.count(text)
            extra = 0 if placed[tier] else header
            room = budget - used - extra
            truncated = cand.truncated
            if tokens > room and cand.min_tokens and room >= cand.min_tokens:
                text = counter.truncate(text.rstrip("\n"), room - counter.count(ELLIPSIS)).rstrip() + ELLIPSIS
                tokens, truncated = counter.count(text), True
            if tokens > room and cand.stand_in:
                head, _, tail = cand.stand_in.rpartition(SIZE)     # the last one: a speaker may spell it too
                marker = _clean(f"{head}{tokens}{tail}")
                if counter.count(marker) <= room:
                    stood_in[cand.id] = tokens
                    text, tokens, truncated = marker, counter.count(marker), True
            if tokens > room:
                reason = "budget exhausted" if budget - used <= extra else f"does not fit: needs {tokens + extra} " \
                         f"tokens, {max(budget - used, 0)} left"
                dropped.append(Dropped(tier=tier, id=cand.id, tokens=tokens + extra, reason=reason + cand.note))
                cut = bool(cand.stand_in)   # never an older turn after a newer one left out unmarked
                continue
            used += tokens + extra
            placed[tier].append((cand, WindowPiece(tier=tier, id=cand.id, tokens=tokens + extra, text=text,
                                                   citations=list(cand.citations), truncated=truncated)))
        # a marker marks a gap between placed pieces; those after the last whole piece mark none: room back
        while placed[tier] and placed[tier][-1][1].id in stood_in:
            cand, piece = placed[tier].pop()
            used -= piece.tokens
            dropped.append(Dropped(tier=tier, id=cand.id, tokens=stood_in[cand.id],
                                   reason=f"does not fit: needs {stood_in[cand.id]} tokens" + cand.note))
    while True:
        text = _render(placed)
        total = sum(p.tokens for t in TIERS for _, p in placed[t])
        # Headings and non-empty pieces start with a non-space character and end with a newline, and no chunk of
        # tiktoken's pre-tokenizer (cl100k, o200k, ...) crosses such a boundary, so the window counts exactly the
        # sum of its parts. Recount the whole text only where a boundary effect could matter: an empty piece
        # ("\n\n" merges), or a sum within one token per piece of the budget.
        margin = sum(len(placed[t]) + 1 for t in TIERS if placed[t])
        if total + margin <= budget and all(len(p.text) > 1 for t in TIERS for _, p in placed[t]):
            break
        total = counter.count(text)
        if total <= budget:
            break
        victim = next(t for t in reversed(TIERS) if placed[t] and t != "system")  # system alone fits (checked)
        cand, piece = placed[victim].pop()
        dropped.append(Dropped(tier=victim, id=piece.id, tokens=piece.tokens, reason="token boundary effects"))
    pieces = [p for t in TIERS for _, p in sorted(placed[t], key=lambda cp: cp[0].order)]
    tier_tokens = {t: sum(p.tokens for _, p in placed[t]) for t in TIERS if placed[t]}
    return Assembled(pieces=pieces, dropped=dropped, text=text, total_tokens=total, tier_tokens=tier_tokens)


def _render(placed: dict[str, list[tuple[Candidate, WindowPiece]]]) -> str:
    out = []
    for tier in TIERS:
        if placed[tier]:
            out.append(HEADERS[tier])
            out.extend(p.text for _, p in sorted(placed[tier], key=lambda cp: cp[0].order))
    return "".join(out)


# ---- rendering of each kind of piece (pure, deterministic) ----------------------------------------------------
def iso(dt: datetime | None) -> str:
    """UTC ISO 8601 to the second ('2024-05-01T09:00:00Z', '0999-03-01T09:30:00Z': four-digit years, which
    `strftime("%Y")` does not pad on Linux), or '?' when unknown. `dt` is a UTC datetime."""
    return dt.replace(tzinfo=None, microsecond=0).isoformat() + "Z" if dt else "?"


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys (byte-stable)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def system_candidate(policy: str) -> Candidate:
    return Candidate("system", "system", policy)


def goal_candidates(goal: str | None, constraints: Sequence[str]) -> list[Candidate]:
    """The goal and its constraints as one piece (they belong together)."""
    if not goal and not constraints:
        return []
    lines = ([f"Goal: {goal.strip()}"] if goal else []) + [f"- Constraint: {c.strip()}" for c in constraints]
    return [Candidate("goal", "goal", "\n".join(lines))]


_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def tool_relevance(query: str, name: str, description: str) -> float:
    """Lexical relevance of a tool to the query: shared words (name parts split on _ and -) over
    sqrt(tool words), a cosine-style normalisation so long descriptions do not win by length."""
    q = _words(query)
    t = _words(name.replace("_", " ").replace("-", " ") + " " + description)
    return len(q & t) / math.sqrt(len(t)) if t else 0.0


def tool_candidates(tools: Sequence[dict[str, Any]], query: str) -> list[Candidate]:
    """Tool schemas, most relevant to `query` first (routing); rendered in the caller's order.
    Each tool dict has `name`, `description`, `parameters` (JSON schema)."""
    scored = []
    for i, tool in enumerate(tools):
        text = f"- {tool['name']}: {tool.get('description') or ''}".rstrip() + \
               f"\n  parameters: {canonical_json(tool.get('parameters') or {})}"
        score = tool_relevance(query, tool["name"], tool.get("description") or "")
        scored.append((-score, tool["name"], Candidate("tools", f"tool:{tool['name']}", text, order=(i,),
                                                      note=f" (routed out; relevance {score:.2f})")))
    return [c for _, _, c in sorted(scored, key=lambda s: (s[0], s[1]))]


def pin_candidates(pins: Iterable[Any]) -> list[Candidate]:
    """Active pins, by key. Each has `key`, `render()`, `version`, `set_by`."""
    out = []
    for p in sorted(pins, key=lambda p: p.key):
        cite = Citation(kind="pin", id=p.key, episode_ids=[p.set_by] if p.set_by else [])
        out.append(Candidate("pins", f"pin:{p.key}", f"- {p.render()}", (cite,), order=(p.key,)))
    return out


@dataclass(frozen=True, slots=True)
class TailTurn:
    """A raw turn of the tail as the window needs it (what `episode_line` renders and the citation names), read by
    `cypher/sessions/window_state` - lighter than a full `graphmem.models.Episode`."""

    id: str
    kind: str
    content: str
    occurred_at: datetime
    role: str | None = None
    speaker: str | None = None
    source: str | None = None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "TailTurn":
        """From the query's map; `occurred_at` is an ISO 8601 string (toString of a DATETIME)."""
        return cls(id=row["id"], kind=row["kind"], content=row["content"], occurred_at=parse_time(row["occurred_at"]),
                   role=row.get("role"), speaker=row.get("speaker"), source=row.get("source") or "user_explicit")


def parse_time(value: Any) -> datetime:
    """An aware UTC datetime from Cypher's toString(datetime) ('2024-05-01T09:00Z', with seconds and fractions when
    not zero) or from a datetime."""
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    elif hasattr(value, "to_native"):
        value = value.to_native()
    return value.astimezone(timezone.utc)


def _who(e: Any) -> str:
    """`user (Dana)`: the role (or kind) and speaker of a turn."""
    return (e.role or e.kind) + (f" ({e.speaker})" if e.speaker else "")


def episode_line(e: Any) -> str:
    """`[2024-05-01T09:00:00Z] user (Dana): text` - the rendering of one raw turn."""
    return f"[{iso(e.occurred_at)}] {_who(e)}: {e.content.strip()}"


def tail_candidates(episodes_newest_first: Sequence[Any]) -> list[Candidate]:
    """The raw tail: newest kept first, rendered oldest first. A turn too long for what is left stands as a marker
    line (its time, speaker, size and episode id), so the turns around it never read as consecutive."""
    out = []
    n = len(episodes_newest_first)
    for i, e in enumerate(episodes_newest_first):
        cite = Citation(kind="episode", id=e.id, date=e.occurred_at, source=e.source)
        marker = f"[{iso(e.occurred_at)}] {_who(e)}: [left out for the budget: {SIZE} tokens; episode {e.id}]"
        out.append(Candidate("recent", f"episode:{e.id}", episode_line(e), (cite,), order=(n - i,), stand_in=marker))
    return out


def summary_candidates(summary: Any | None, candidate_pins: Sequence[Any]) -> list[Candidate]:
    """The current summary revision (marked generated), then unconfirmed pin candidates from compaction."""
    out = []
    if summary is not None:
        head = f"[summary rev {summary.rev}; turns {iso(summary.covers_from_at)} to {iso(summary.covers_to_at)}; " \
               f"model {summary.model}]"
        cite = Citation(kind="summary", id=summary.id, date=summary.covers_to_at, source=summary.model)
        out.append(Candidate("summaries", f"summary:{summary.id}", f"{head}\n{summary.text.strip()}", (cite,),
                             order=(0,)))
    for i, p in enumerate(sorted(candidate_pins, key=lambda p: p.key)):
        cite = Citation(kind="pin", id=p.key, episode_ids=[p.set_by] if p.set_by else [])
        out.append(Candidate("summaries", f"pin-candidate:{p.key}", f"- unconfirmed pin candidate {p.render()}",
                             (cite,), order=(1, p.key)))
    return out


def hit_candidates(hits: Sequence[Any]) -> list[Candidate]:
    """Recall hits (facts and episodes) in rank order, each cited: fact id, episode ids, date, source."""
    out = []
    for rank, h in enumerate(hits):
        if h.kind == "fact" and h.fact is not None:
            f = h.fact
            cite = Citation(kind="fact", id=f.id, episode_ids=sorted(h.episode_ids), date=f.valid_from,
                            source=f.source)
            eps = ",".join(sorted(h.episode_ids)) or "-"
            text = f"- {f.statement} [fact {f.id}; episodes {eps}; valid from {iso(f.valid_from)}; {f.source}]"
        elif h.kind == "episode" and h.episode is not None:
            e = h.episode
            cite = Citation(kind="episode", id=e.id, episode_ids=[e.id], date=e.occurred_at, source=e.source)
            text = f"- {episode_line(e)} [episode {e.id}; {e.source}]"
        else:
            continue
        out.append(Candidate("retrieved", f"{h.kind}:{h.id}", text, (cite,), order=(rank,)))
    return out


def document_candidates(documents: Sequence[Any], counter: Counter, snippet_tokens: int) -> list[Candidate]:
    """Caller documents, cited not dumped: `[doc id] title (source): snippet` with the snippet cut to
    `snippet_tokens`; a snippet may be cut further to fit what is left of the budget."""
    out = []
    for i, d in enumerate(documents):
        body = " ".join(d.text.split())
        snippet = counter.truncate(body, snippet_tokens)
        if snippet != body:
            snippet = snippet.rstrip() + " [...]"
        src = f" ({d.source})" if d.source else ""
        title = f" {d.title.strip()}" if d.title else ""
        head = f"- [doc {d.id}]{title}{src}: "
        cite = Citation(kind="document", id=d.id, source=d.source)
        out.append(Candidate("documents", f"document:{d.id}", head + snippet, (cite,), order=(i,),
                             min_tokens=counter.count(head) + 8, truncated=snippet != body))
    return out
