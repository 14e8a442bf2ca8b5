"""Compaction: when a session's raw tail passes `settings.compaction_threshold_tokens`, the older turns are folded
into a new summary revision, after the turn and off the request path.

Order (seed 000: "The pin write happens before the prose shrink, so a crash still leaves the amount"):
1. pin candidates: ids, amounts, currencies, approval ids, idempotency keys and cancel requests found in the turns
   being compacted are written as `candidate` pins - only for keys the session has not pinned and values no pin
   already holds (a human gate holds its approval id) and that were never deleted from the session
   (`PinStore.held_values`); an existing pin is never changed;
2. the previous summary and the compacted turns are summarized (LLM, or the extractive fallback) into at most
   `settings.summary_max_tokens` tokens;
3. a new `:Summary` revision (rev + 1) is written: `COVERS` the compacted episodes, `REVISES` the previous one,
   which stays for rollback. Raw episodes stay (retention decides). A turn erased while the compaction runs makes
   it give up (its summary and candidates would quote the erased turn); the next turn schedules it again. So does a
   turn past retention (its own, or its session's idle TTL) since it was read: right before every LLM request of
   step 2 (the first and each retry: `ChatClient.complete`'s `before_send`, `Compactor._still_retained`), nothing
   more is sent; at step 3, under the turns' locks, nothing is written (`lock_retained_episodes`).
One run folds at most `settings.compaction_max_fold_tokens` tokens of the older turns, oldest first (always at least
the oldest one), reading only those turns' content (the raw tail is read without it, `sessions/tail`); the rest wait
for the next run (`CompactionResult.remaining_episodes`), which the background job starts at once.
Compaction is also due when the raw tail holds more episodes than a window reads
(`settings.context_tail_max_episodes`). The newest `settings.compaction_keep_tokens` tokens of turns stay raw (at
most half of `context_tail_max_episodes` episodes), and the newest episode always does: a tool result longer than
that is not summarized away before the agent has read it; so do the episodes that arrived last (up to half of
`context_tail_max_episodes`), also when their `occurred_at` is older than that of turns before them (a backdated
event). A revision written concurrently by another process wins; this run then gives up (`Conflict` is caught and
reported).
"""
from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

import pycountry
from pydantic import BaseModel, ValidationError

from graphmem.context.models import CompactionResult, Summary
from graphmem.context.pins import (AmountValue, ApprovalIdValue, CurrencyValue, IdempotencyKeyValue, ObligationValue,
                                   OrderIdValue, PinStore, PinValue, value_keys)
from graphmem.context.summarizer import PROMPT_VERSION, Summarizer
from graphmem.errors import Conflict, NotFound
from graphmem.models import Episode, UtcDatetime, new_id, role_source
from graphmem.settings import Settings
from graphmem.store import Database, require_tenant, whole
from graphmem.store.db import Tx
from graphmem.store.episodes import lock_retained_episodes
from graphmem.timeutil import utcnow
from graphmem.tokens import TokenCounter

log = logging.getLogger("graphmem.context")

# ---- pin candidates ------------------------------------------------------------------------------------------
_ID = r"([A-Za-z0-9][A-Za-z0-9-]{2,63})"
_ORDER = re.compile(r"\border\s*(?:id|number|no\.?|#)?\s*[:#]?\s*" + _ID, re.I)
_APPROVAL = re.compile(r"\bapproval\s*(?:id|code|number|#)?\s*[:#]?\s*" + _ID, re.I)
_IDEMPOTENCY = re.compile(r"\bidempotency[ _-]key\s*(?:is\s*)?[:=]?\s*([A-Za-z0-9][\w.:-]{3,127})", re.I)
_SYMBOLS = {"€": "EUR", "£": "GBP", "$": "USD", "¥": "JPY"}
_MONEY = re.compile(r"(?P<sym>[€£$¥])\s?(?P<a1>\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)"
                    r"|(?P<a2>\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)\s?(?P<code>[A-Z]{3})\b"
                    r"|\b(?P<code2>[A-Z]{3})\s?(?P<a3>\d{1,3}(?:,\d{3})*(?:\.\d+)?|\d+(?:\.\d+)?)")
_DECIMAL_COMMA = re.compile(r",(\d{1,2})\b")
"""The decimals of an amount written the continental way ("1.299,00"), right after the amount the _MONEY match read."""
_NOT_REQUESTED = re.compile(r"(?:\b(?:no|not|never|nobody|no one|if|whether|who|why)|\b(?:don|doesn|didn|won|wouldn|"
                            r"can|couldn|isn|aren|shouldn)['’`]?t)(?:\s+[\w'’`]+){0,2}\s*$"
                            r"|\byou\s*$|\b(?:do|does|did|should|must)\s+(?:i|we)\s*$", re.I)
"""What makes the verb of a cancel request after it no request: a negation, a condition or a question word up to two
words before it ("no need to cancel", "I don't want to cancel", "not sure I want to cancel", "if I need to
cancel", "Who asked you to cancel my order?", "Nobody wants to cancel"), "you" right before it ("Do you want to
cancel ...?": an offer), or a question of whether to ("Do I need to cancel it first?")."""
_QUESTIONED = re.compile(r"\b(?:why|who|how come)(?:\s+[\w'’`]+){0,2}\s*$", re.I)
"""What makes a request put to the agent a complaint: "Why would you cancel my order?!"."""
OBLIGATION_CONTEXT = 300
"""Characters kept on each side of a cancel request's words when its sentence is longer than twice this (a pin
value holds at most `graphmem.context.pins.MAX_TEXT`, 2,000 characters: a longer one failed the compaction)."""
_SENTENCES = re.compile(r"(?:[^.!?\n]|(?<=\d)\.(?=\d))+")
"""Sentences (clauses up to a sentence end; a point between digits, 12.50, is none), found in one linear pass: a
pattern that spans a whole sentence on both sides of its trigger took quadratic time (8,000 characters without a
full stop: 10 s)."""
_CANCEL_FORMS = [(re.compile(p, re.I), anyone, unless) for p, anyone, unless in (
    (r"\b(?P<t>(?:asked|asks|wants?|requested|requests|needs?)\s+(?:(?:us|you|me|them)(?:\s+\w+){0,2}\s+)?to"
     r"\s+cancel)\b", True, _NOT_REQUESTED),
    (r"\b(?P<t>wants?\s+(?:my|our|the|this|that|it)\b[^.!?\n]{0,40}?\bcancell?ed)\b", True, _NOT_REQUESTED),
    (r"\b(?P<t>like\s+(?:(?:you|us)\s+)?to\s+cancel)\b", False, _NOT_REQUESTED),
    (r"\b(?P<t>(?:please(?:\s+go\s+ahead\s+and)?|(?:can|could|would|can['’`]?t)\s+(?:you|we)(?:\s+please)?"
     r"(?:\s+just)?|you\s+(?:can|may)(?:\s+go\s+ahead\s+and)?|(?:don['’`]?t|do not)\s+forget\s+to)\s+cancel)\b",
     False, _QUESTIONED),
    (r"^\s*(?:(?:yes|yeah|yep|ok|okay|sure|fine|go ahead)\b[,!]?\s*(?:and\s+)?)?(?:just\s+)?"
     r"(?P<t>cancel\s+(?:my|our|the|this|that|it|order|subscription|renewal|everything)\b)", False, None))]
"""Cancel requests: (pattern searched in each sentence, said by anyone, what before its verb makes it none). In anyone's words (the
assistant reporting one included): "the user asked to cancel ...", "I want to cancel", "we need to cancel", "I want
my order 7777 cancelled". Put to the agent, so the user's words only (the assistant's "Would you like to cancel the
order?" is an offer): "I'd like (you) to cancel", "Please cancel order 7777", "could you cancel it", "Can't you
cancel it?", "You can cancel my order", "Don't forget to cancel the old one", "Can we cancel ...", "Cancel my
order ...", "Yes, cancel it", "Go ahead and cancel it"."""
_WITHDRAWN = re.compile(r"\b(?:never ?mind|changed my mind|scratch that|forget (?:it|that|about it)|hold on|"
                        r"on second thought|(?:wait|actually),? (?:don['’`]?t|do not)\b)", re.I)
"""A request taken back later in the same turn: "Please cancel my order. Actually never mind, don't cancel it."."""


def _cancel_request(text: str, role: str | None, kind: str | None) -> str | None:
    """The first sentence of `text` that asks for a cancellation (`_CANCEL_FORMS`; those put to the agent only when
    a user speaks, `graphmem.models.role_source`), whitespace collapsed, or None. A verb negated, made a condition
    or questioned (`_NOT_REQUESTED`, `_QUESTIONED`) asks for none, nor does a request the turn takes back after it
    (`_WITHDRAWN`); a request beside a negation elsewhere still does ("No, please cancel it")."""
    user = role_source(role, kind) == "user_explicit"
    forms = [(form, unless) for form, anyone, unless in _CANCEL_FORMS if anyone or user]
    for sentence in _SENTENCES.finditer(text):
        said = sentence.group(0)
        for form, unless in forms:
            for m in form.finditer(said):
                if not (unless and unless.search(said, 0, m.start("t"))) \
                        and not _WITHDRAWN.search(text, sentence.end()):
                    if len(said) > OBLIGATION_CONTEXT * 2:   # a pin holds at most MAX_TEXT characters
                        said = "... " + said[max(0, m.start() - OBLIGATION_CONTEXT):m.end() + OBLIGATION_CONTEXT]
                    return " ".join(said.split())
    return None


def _has_digit(s: str) -> bool:
    return any(ch.isdigit() for ch in s)


def _found(text: str, role: str | None, kind: str | None) -> Iterator[tuple[str, PinValue]]:
    """Every (key, typed value) pin candidate in one episode's `text`, in the order `extract_candidates` prefers
    them (see there); `role` and `kind` are the episode's (a request put to the agent counts in a user's words)."""
    for m in _ORDER.finditer(text):
        if _has_digit(m.group(1)):
            yield "order_id", OrderIdValue(value=m.group(1))
    for m in _APPROVAL.finditer(text):
        if _has_digit(m.group(1)):
            yield "approval_id", ApprovalIdValue(value=m.group(1))
    for m in _IDEMPOTENCY.finditer(text):
        yield "idempotency_key", IdempotencyKeyValue(value=m.group(1))
    for m in _MONEY.finditer(text):
        code = _SYMBOLS.get(m.group("sym") or "") or m.group("code") or m.group("code2")
        amount = m.group("a1") or m.group("a2") or m.group("a3")
        after = m.end("a1") if m.group("a1") else m.end("a3") if m.group("a3") else None   # a currency first
        cents = _DECIMAL_COMMA.match(text, after) if after is not None else None
        if cents:   # "€1.299,00": points group thousands, a comma marks the decimals
            amount = amount.replace(".", "") + "." + cents.group(1)
        if code and pycountry.currencies.get(alpha_3=code) is not None:
            try:
                value = AmountValue(value=Decimal(amount.replace(",", "")))
            except ValidationError:    # more digits than a pin holds (graphmem.context.pins._decimal): no amount
                continue
            yield "amount", value
            yield "currency", CurrencyValue(value=code)
    request = _cancel_request(text, role, kind)
    if request:
        yield "obligation", ObligationValue(value=request)


def extract_candidates(episodes: list[Episode]) -> list[tuple[str, PinValue, str]]:
    """Pin candidates (key, typed value, episode id) from turns, first occurrence per key, in turn order.

    Recognised: `order_id` ("order A-10293", "order #10293"), `amount` + `currency` ("€129.99", "129.99 EUR",
    "EUR 129.99"; ISO 4217 codes checked with pycountry; "$" read as USD), `approval_id` ("approval APR-7781"),
    `idempotency_key`, and `obligation` for cancel requests (`_cancel_request`: "the user asked to cancel ...",
    "Please cancel order 7777", "could you cancel it", "I'd like to cancel"; not a negated or conditional one, "no
    need to cancel", "if I want to cancel", nor the assistant's offer, "Would you like to cancel it?").
    Ids must contain a digit (so "order status" is not an id)."""
    out: dict[str, tuple[str, PinValue, str]] = {}
    for e in episodes:
        for key, value in _found(e.content, getattr(e, "role", None), getattr(e, "kind", None)):
            out.setdefault(key, (key, value, e.id))
    return list(out.values())


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_ID_LETTERS = re.compile(r"[\W_]+")
"""What an id is compared without (graphmem.context.pins value keys: "A-10293" is "a10293")."""


def _numbers(text: str) -> set[tuple[str, str]]:
    """The amount `value_keys` of every number written in `text`, read both ways where it is ambiguous ("1,299.00"
    and "1.299,00" are 1299; "129,99" is 129.99 and 12999)."""
    out = set()
    for m in _NUMBER.finditer(text):
        written = m.group(0)
        for plain in (written.replace(",", ""), written.replace(".", "").replace(",", ".")):
            try:
                out.add(("amount", format(Decimal(plain).normalize(), "f")))
            except ArithmeticError:    # "1.2.3" is no number
                continue
    return out


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def dismissed_in(texts: Iterable[str], dismissed: Iterable[str]) -> set[str]:
    """The entries of `dismissed` ("<value_type>:<value>" strings, the `value_keys` of pins deleted from a session,
    cypher pins/delete) whose value occurs in `texts` (the text an erasure deletes: it may be where the value came
    from). An entry occurs when compaction would find its value there as a candidate (`_found`, every request
    form counted, and any number as an amount), or when its value is written there case-blind, whitespace
    collapsed (an order, approval or idempotency id also by its letters and digits alone: "ORDER a10293" holds
    "order_id:a10293"). Generous by design: what it finds the session forgets, and a forgotten dismissal can only
    be proposed again, while a kept one could keep erased words. Returns a subset of `dismissed`."""
    texts = [t for t in texts if t]
    if not texts:
        return set()
    found: set[tuple[str, str]] = set()
    for t in texts:
        for _, value in _found(t, "user", None):
            found |= value_keys(value)
        found |= _numbers(t)
    folded = "\n".join(_folded(t) for t in texts)
    compact = _ID_LETTERS.sub("", folded)
    out = set()
    for d in dismissed:
        kind, _, value = d.partition(":")
        written = _folded(value).removeprefix("... ")   # a long request's excerpt starts so (_cancel_request)
        letters = _ID_LETTERS.sub("", written) if kind in ("order_id", "approval_id", "idempotency_key") else ""
        if (kind, value) in found or (written and written in folded) or (letters and letters in compact):
            out.add(d)
    return out


PAST_RETENTION = "a turn this compaction folds (or the summary it revises) is past retention"
"""The reason of a compaction that gave up because what it folds passed retention while it ran."""


# ---- summary revisions ---------------------------------------------------------------------------------------
def _summary(row: dict[str, Any], covers: int | None = None) -> Summary:
    return Summary(**row, covers=covers)


class SummaryStore:
    """Summary revisions of a session: current, list, write (with lineage) and rollback."""

    def __init__(self, db: Database):
        self.db = db

    def current(self, tenant_id: str, session_id: str) -> Summary | None:
        """The highest active revision not built on an episode past retention (as every read), or None."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: current_in(tx, tenant_id, session_id))

    def list(self, tenant_id: str, session_id: str, offset: int = 0, limit: int = 50) -> list[Summary]:
        """Every revision (active and rolled back), newest first; not those built on an episode past retention
        (one covering it, or revising one that does), which the sweeper deletes."""
        require_tenant(tenant_id)
        return [_summary(r["summary"], r["covers"]) for r in self.db.rows(
            "summaries/list", tenant_id=tenant_id, session_id=session_id, offset=offset, limit=limit, now=utcnow())]

    def rollback(self, tenant_id: str, session_id: str) -> Summary | None:
        """Mark the current revision rolled back (kept); the one it revised is current again and the turns only the
        rolled-back one covered return to the raw tail. Returns the new current revision (None if none is left).
        `NotFound` (field `session_id`) when the session has no active summary."""
        require_tenant(tenant_id)

        def work(tx: Tx) -> Summary | None:
            tx.one("summaries/lock_latest", tenant_id=tenant_id, session_id=session_id)
            if tx.one("summaries/rollback", tenant_id=tenant_id, session_id=session_id, now=utcnow()) is None:
                raise NotFound(f"session {session_id!r} has no active summary to roll back", field="session_id")
            return current_in(tx, tenant_id, session_id)
        return self.db.write(work)


def current_in(tx: Tx, tenant_id: str, session_id: str) -> Summary | None:
    """`SummaryStore.current` inside a transaction."""
    row = tx.one("summaries/current", tenant_id=tenant_id, session_id=session_id, now=utcnow())
    return _summary(row["summary"]) if row else None


class TailTurn(BaseModel):
    """A turn of a session's raw tail as a compaction chooses what to fold: `id`, `token_count` (tokens),
    `occurred_at` and `ingested_at` (UTC); its content is read only for the turns folded."""

    id: str
    token_count: int
    occurred_at: UtcDatetime
    ingested_at: UtcDatetime


class Compactor:
    """Runs one compaction of one session (`compact`). Scheduling lives in the context service."""

    def __init__(self, db: Database, settings: Settings, pins: PinStore, summaries: SummaryStore,
                 summarizer: Summarizer, expire: Callable[[str, list[str]], object] | None = None):
        """`expire(tenant_id, episode ids)`: expires those of the episodes past retention, as the sweeper would
        (`graphmem.governance.sweeper.Sweeper.expire_past_retention`); a compaction that gives up calls it with the
        turns it folds, so the pin candidates it proposed from a turn past retention go with that turn at once."""
        self.db = db
        self.expire = expire
        self.settings = settings
        self.pins = pins
        self.summaries = summaries
        self.summarizer = summarizer
        self.counter = TokenCounter.for_model(settings.llm_model)

    def _still_retained(self, tenant_id: str, session_id: str, folded: list[str],
                        before: Summary | None) -> Callable[[], None]:
        """The check run right before each LLM request of a compaction (`Summarizer.summarize`'s `before_send`): it
        raises `Conflict` (field `session_id`, `PAST_RETENTION`) unless every turn of `folded` (episode ids) is
        still within retention (its own, its session's idle TTL: `episodes/retained`, as every read) and the summary
        `before` it revises is still current (it is not once a turn it covers passed retention)."""
        def check() -> None:
            now = utcnow()
            kept = self.db.rows("episodes/retained", tenant_id=tenant_id, ids=folded, now=now)
            current = self.summaries.current(tenant_id, session_id) if before is not None else None
            if len(kept) != len(folded) or (current.id if current else None) != (before.id if before else None):
                raise Conflict(PAST_RETENTION, field="session_id")
        return check

    def _gave_up(self, tenant_id: str, folded: list[str], created: list[str], exc: Conflict) -> CompactionResult:
        """The result of a compaction that gave up (`exc`: a folded turn erased or past retention, another
        compaction first). Those of the `folded` turns (episode ids) past retention are expired now (`expire`), with
        the pin candidates proposed from them: a candidate goes with the turn it came from (docs/governance.md)."""
        if self.expire is not None:
            self.expire(tenant_id, folded)
        return CompactionResult(pin_candidates=created, reason=exc.detail)

    def raw_tail(self, tenant_id: str, session_id: str) -> list[TailTurn]:
        """The uncompacted episodes since the window start, oldest first, as a compaction chooses by (`TailTurn`:
        no content; one statement, `sessions/tail`)."""
        return [TailTurn(**r["episode"]) for r in self.db.rows("sessions/tail", tenant_id=tenant_id,
                                                                 session_id=session_id, now=utcnow())
                if whole(r["episode"], TailTurn)]

    def _turns(self, tenant_id: str, session_id: str, ids: list[str]) -> list[Episode]:
        """The episodes `ids` of the session in full, oldest first, leaving out any erased or past retention since
        the tail was read (`sessions/tail_turns`)."""
        return [Episode(**r["episode"]) for r in self.db.rows("sessions/tail_turns", tenant_id=tenant_id,
                                                                session_id=session_id, ids=ids, now=utcnow())
                if whole(r["episode"], Episode)]

    def _tail_size(self, tenant_id: str, session_id: str) -> tuple[int, int]:
        """(tokens, episodes) in the session's raw (uncompacted) tail; (0, 0) for an unknown session."""
        row = self.db.one("sessions/tail_tokens", tenant_id=tenant_id, session_id=session_id, now=utcnow())
        return (row["tokens"], row["episodes"]) if row else (0, 0)

    def tail_tokens(self, tenant_id: str, session_id: str) -> int:
        """Tokens in the session's raw (uncompacted) tail."""
        return self._tail_size(tenant_id, session_id)[0]

    def due(self, tenant_id: str, session_id: str) -> bool:
        """True when the raw tail passes `compaction_threshold_tokens` tokens or holds more episodes than a window
        reads (`context_tail_max_episodes`), which would otherwise leave the oldest of them out of every window."""
        return self._over(*self._tail_size(tenant_id, session_id))

    def _over(self, tokens: int, episodes: int) -> bool:
        return tokens > self.settings.compaction_threshold_tokens or episodes > self.settings.context_tail_max_episodes

    def compact(self, tenant_id: str, session_id: str, *, force: bool = False,
                window_reset_at: Any = None) -> CompactionResult:
        """Compact the session if its raw tail exceeds the threshold (or always, with `force`, if there is anything
        older than the kept tail). See the module docstring for the steps."""
        require_tenant(tenant_id)
        tail = self.raw_tail(tenant_id, session_id)
        total = sum(e.token_count for e in tail)
        if not force and not self._over(total, len(tail)):
            return CompactionResult(reason=f"raw tail {total} tokens <= threshold "
                                           f"{self.settings.compaction_threshold_tokens}")
        kept, keep = 0, 0
        for e in reversed(tail):   # the newest episode always stays raw, however long: the agent needs it verbatim
            if keep and (kept + e.token_count > self.settings.compaction_keep_tokens
                         or keep >= self.settings.context_tail_max_episodes // 2):
                break
            kept += e.token_count
            keep += 1
        # and so do the episodes that arrived last (one turn's share an `ingested_at`), wherever their
        # `occurred_at` puts them: a turn stamped earlier than the turns before it is still the agent's newest
        # (not a bulk import of more than a kept tail holds: that would never be compacted)
        arrived = max((e.ingested_at for e in tail), default=None)
        late = {e.id for e in tail if e.ingested_at == arrived}
        if len(late) > max(1, self.settings.context_tail_max_episodes // 2):
            late = set()
        older = [e for e in tail[:len(tail) - keep] if e.id not in late]
        if not older:
            return CompactionResult(reason="nothing older than the kept tail")
        # at most compaction_max_fold_tokens of them, oldest first (always the oldest): the rest waits for the next
        # run, so a tail imported in bulk is folded in steps an LLM's prompt and Neo4j's memory hold
        fold, size = [], 0
        for e in older:
            if fold and size + e.token_count > self.settings.compaction_max_fold_tokens:
                break
            fold.append(e)
            size += e.token_count
        remaining = len(older) - len(fold)
        older = self._turns(tenant_id, session_id, [e.id for e in fold])
        if len(older) != len(fold):
            return self._gave_up(tenant_id, [e.id for e in fold], [], Conflict(
                "a turn this compaction folds was erased or passed retention meanwhile", field="session_id"))
        # 1. pins first: candidates for keys and values nobody pinned yet
        held = self.pins.held_values(tenant_id, session_id)
        candidates = [c for c in extract_candidates(older) if not value_keys(c[1]) & held]
        created = self.pins.add_candidates(tenant_id, session_id, candidates)
        # 2. the prose shrinks
        before = self.summaries.current(tenant_id, session_id)
        previous = before
        if previous is not None and window_reset_at is not None and previous.created_at < window_reset_at:
            previous = None  # summaries of turns before a TTL reset do not carry over
        folded = sorted(e.id for e in older)
        try:
            draft = self.summarizer.summarize(tenant_id, previous.text if previous else None, older,
                                              self.settings.summary_max_tokens,
                                              before_send=self._still_retained(tenant_id, session_id, folded, before))
        except Conflict as exc:
            return self._gave_up(tenant_id, folded, created, exc)
        source_tokens = sum(e.token_count for e in older) + (previous.tokens if previous else 0)
        now = utcnow()
        # the span covered, earliest to latest turn (a backdated turn folded later may widen it at either end)
        span = sorted([(e.occurred_at, e.id) for e in (older[0], older[-1])] + (
            [(previous.covers_from_at, previous.covers_from), (previous.covers_to_at, previous.covers_to)]
            if previous else []))
        props = {
            "session_id": session_id, "text": draft.text, "model": draft.model, "prompt_version": PROMPT_VERSION,
            "fallback_reason": draft.fallback_reason, "tokens": self.counter.count(draft.text),
            "source_tokens": source_tokens,
            "covers_from": span[0][1], "covers_from_at": span[0][0],
            "covers_to": span[-1][1], "covers_to_at": span[-1][0],
        }

        # 3. the new revision, unless another compaction got there first or a turn it folds was erased or passed
        # retention meanwhile (its text would quote that turn; the turns are locked first, in the erasure's order, so
        # an erasure either commits before and is seen here, or waits and then deletes this revision with its COVERS)
        def work(tx: Tx) -> Summary:
            if len(lock_retained_episodes(tx, tenant_id, set(folded), utcnow())) != len(folded):
                raise Conflict("a turn this compaction folds was erased or passed retention meanwhile",
                               field="session_id")
            max_rev = tx.one("summaries/lock_latest", tenant_id=tenant_id, session_id=session_id)["max_rev"]
            current = current_in(tx, tenant_id, session_id)
            if (current.id if current else None) != (before.id if before else None):
                raise Conflict("another compaction of this session finished first", field="session_id")
            row = tx.one("summaries/create", tenant_id=tenant_id, id=new_id(), now=now,
                         previous_id=current.id if current else None, episode_ids=[e.id for e in older],
                         props={**props, "rev": max_rev + 1})
            return _summary(row["summary"], row["covered"])
        try:
            summary = self.db.write(work)
        except Conflict as exc:
            return self._gave_up(tenant_id, folded, created, exc)
        return CompactionResult(summary=summary, compacted_episodes=len(older), remaining_episodes=remaining,
                                pin_candidates=created,
                                reason="forced" if force else
                                f"raw tail {total} tokens > threshold {self.settings.compaction_threshold_tokens}"
                                if total > self.settings.compaction_threshold_tokens else
                                f"raw tail {len(tail)} episodes > {self.settings.context_tail_max_episodes} a window "
                                f"reads")
