"""Summarizers for compaction: an LLM summarizer through the shared chat client (`graphmem.ingest.llm.ChatClient`:
any OpenAI-compatible endpoint, its retries, concurrency bound, usage metrics and `before_send` check; prompt
`graphmem/prompts/summarize_v1.md`) and a deterministic extractive fallback used when no LLM is configured or the
call fails.

Both fold the previous summary revision and the newly compacted turns into one text of at most `max_tokens`
tokens. Neither can touch pins: they return text only.
"""
from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, get_args

from graphmem.context.assembly import episode_line
from graphmem.ingest.llm import ChatClient, Usage
from graphmem.models import EpisodeKind, role_source
from graphmem.settings import Settings
from graphmem.tokens import TokenCounter

log = logging.getLogger("graphmem.context")
PROMPT_VERSION = "summarize_v1"
PROMPT_PATH = Path(__file__).resolve().parent.parent / "prompts" / f"{PROMPT_VERSION}.md"
EXTRACTIVE_MODEL = "extractive-v1"
MAX_LINE_TOKENS = 60
# Words that mark decisions, commitments and obligations (seed 000, "What compaction may touch": keep goals,
# authorization decisions, money amounts, idempotency keys, human-gate outcomes and open obligations).
_KEEP = re.compile(r"\b(approv\w*|reject\w*|declin\w*|cancel\w*|refund\w*|escalat\w*|promis\w*|agree\w*|confirm\w*|"
                   r"deadline|must|need\w*|want\w*|goal|order|amount|paid|charge\w*|deliver\w*|will|won't|"
                   r"asked|request\w*|policy|manager|obligation)\b", re.I)
# A standing constraint or preference of the user ("never call me on my landline", "email only", "don't text me",
# "I'd rather you emailed", "Only email me", "Keep all replies in French", "Address me as Dr. Okafor", "Call me Sam",
# "My budget is capped", "no upsells"), or its withdrawal ("you can call my landline again"): what the agent must
# keep honouring long after the turn that said it (seed 000: keep constraints and goals). A "don't", "only", "keep",
# "call me", "budget" or "no" of a plain statement ("I don't know the tracking number", "I only received 2 of 3
# items", "I keep getting the wrong parcel", "Nobody would call me back", "Our budget meeting moved", "I checked
# twice, no luck") is none: with a number it outscored the real constraint and, in a support chat, pushed it out of
# the summary by the third revision. So "keep" and "call me" count at the start of a sentence (or after "please"),
# "only" before a verb and "me" or "us", "budget" as "my budget is/of", and "no X" of a plural alone at the end of a
# clause ("..., no upsells.", "No calls please.", not "no luck", "no idea", "no updates" or "Order 5512 arrived, no
# box."). A withdrawal's "you can ... again" looks at most 80 characters ahead: unbounded, it rescanned the rest of a
# sentence from every "you can" (a 100,000-character message without a full stop took 74 s, holding the GIL).
_CONSTRAINT = re.compile(r"\b(never|always|must not|mustn['’`]?t|avoid\w*|prefer\w*|instead|allerg\w*|no longer|"
                         r"stop|under no circumstances|please no|no \w+ at all|any ?more|changed my mind|"
                         r"from now on|i(?:['’`]d| would) rather|i (?:don['’`]?t|do not) want|"
                         r"you (?:can|may) [^.!?]{0,80}?\bagain|(?:is|are) (?:fine|ok|okay|alright) (?:now|again)|"
                         r"only (?:by|via|through|on|after|before|between|in the)|"
                         r"only (?!to\b|for\b)\w+ (?:me|us)|(?:address|refer to) me as|"
                         r"(?:my|our) (?:\w+ )?budget (?:is|of)|(?:within|under|over|above) (?:my|our) budget|"
                         r"\w+ only(?=\s*(?:[,.!;]|please|$)))\b"
                         r"|(?:^|[,;:]\s*|\bplease\s+)(?:don['’`]?t|do not)\b"
                         r"|(?:^|\bplease\s+)(?:keep\b|call me\b(?!\s+(?:back|later|when|if|once|about)\b))"
                         r"|(?:^|[,;:]\s*)no (?!(?:idea|luck|worries|problem|problems|thanks|need|way|one|rush|news|"
                         r"updates?|reply|replies|response|answer|change|clue|doubt|matter|word)\b)\w+s(?:\s+please)?"
                         r"(?=\s*(?:[.!;]|$))", re.I)
# Words that make a user's sentence a request the agent has yet to act on ("Please cancel order 7777", "can you ship
# it to my office"): an open obligation (seed 000), kept as a constraint is.
_REQUEST = re.compile(r"\b(please|can you|could you|would you|i(?:['’`]d| would) like|i want|i need|make sure)\b",
                      re.I)
# A decision taken ("Refund of €40 approved", "I escalated order 5003"): above a report that merely names an order.
_DECIDED = re.compile(r"\b(approved|rejected|declined|cancell?ed|refunded|escalated|promised|agreed|confirmed|"
                      r"authori[sz]ed|granted|waived)\b", re.I)
NEW_SHARE = 3
"""A summary keeps up to 1/`NEW_SHARE` of its tokens for the best lines of the turns it newly covers, before the
best of everything fills the rest: without it, lines of earlier revisions (+2 each) filled every later summary,
and a summary said to cover the last hour held only its first minutes."""
ABBREVIATIONS = ("Dr", "Mr", "Mrs", "Ms", "St", "Prof", "e.g", "i.e")
"""Abbreviations whose full stop ends no sentence ("Address me as Dr. Okafor." is one sentence, any case); "etc." ends
one only before a capital letter ("pens, paper, etc. and ink" is one, "pens, etc. Then ..." two)."""
_SENTENCE = re.compile("(?<=[.!?])" + "".join(rf"(?<!\b(?i:{re.escape(a)})\.)" for a in ABBREVIATIONS)
                       + r"(?:(?<!\b(?i:etc)\.)|(?=\s+[A-Z]))\s+|\n+")
"""Where a turn's text splits into sentences: whitespace after a sentence end, and line breaks."""


def excerpt(text: str, start: int, end: int, fits: Callable[[str], bool]) -> str | None:
    """`text` (whitespace collapsed) if `fits` accepts it, else its characters `start:end` (a cue: a constraint's,
    a request's words; `0, 0` for the start of `text`) widened by whole words, one after the cue then one before it
    in turn, while `fits` accepts the result, with "... " before and " ..." after where words were left out: "...
    and my family but never call my landline because my elderly father answers it". None when the cue alone does
    not fit, or no word does. `fits` is called about once per word kept, so it may count tokens (a summary's line,
    `ExtractiveSummarizer._cut`) or characters."""
    whole = " ".join(text.split())
    if fits(whole):
        return whole
    runs = [(m.start(), m.end()) for m in re.finditer(r"\S+", text)]
    run_starts, run_ends = [a for a, _ in runs], [b for _, b in runs]

    def render(a: int, b: int) -> str:
        return ("... " if text[:a].strip() else "") + " ".join(text[a:b].split()) + (" ..." if text[b:].strip() else "")

    a, b = start, end
    if not fits(render(a, b)):
        return None
    grow_right = grow_left = True
    while grow_right or grow_left:
        if grow_right:   # to the end of the next word (of the word the cue ends inside, first)
            i = bisect.bisect_right(run_ends, b)
            grow_right = i < len(runs) and fits(render(a, run_ends[i]))
            if grow_right:
                b = run_ends[i]
        if grow_left:    # to the start of the word before (of the word the cue starts inside, first)
            i = bisect.bisect_left(run_starts, a) - 1
            grow_left = i >= 0 and fits(render(run_starts[i], b))
            if grow_left:
                a = run_starts[i]
    return render(a, b) if text[a:b].strip() else None


@dataclass(frozen=True)
class SummaryDraft:
    """A summarizer's output: the text, the model that wrote it, and why the fallback was used (if it was)."""

    text: str
    model: str
    fallback_reason: str | None = None


class Summarizer(Protocol):
    def summarize(self, tenant_id: str, previous: str | None, turns: list[Any], max_tokens: int, *,
                  before_send: Callable[[], None] | None = None) -> SummaryDraft:
        """`previous` summary text and `turns` (episodes) folded into at most `max_tokens` tokens. `before_send()`
        runs right before every LLM request carrying them (none for a summarizer without an LLM); what it raises is
        raised unchanged, with nothing more sent and no fallback."""
        ...


def _user(label: str) -> bool:
    """Whether a summary line's label ("user: ...", "Human: ...", "message: ..." for a turn without a role,
    "tool_result: ...") is a user's: `graphmem.models.role_source` of the label as a role, or as an episode kind."""
    return role_source(None, label) == "user_explicit" if label in get_args(EpisodeKind) \
        else role_source(label) == "user_explicit"


class ExtractiveSummarizer:
    """Deterministic extractive summary: scores sentences (numbers +3, decision/obligation words +3, a decision
    taken +2 (`_DECIDED`), a user's constraint, preference or request +5 (`_CONSTRAINT`, `_REQUEST`: it outranks a
    tool dump's numbers), user turns +1 (the user is whoever `graphmem.models.role_source` says: "user", "human",
    any case, or no role), lines of the previous summary +2, scored again as the user's when they were: a
    constraint survives every revision), drops chatter (under 4 words without digits or a user's constraint or
    request: "Email only, please." and "Only email me." stay) and exact repeats (repeated tool dumps, and sentences
    the previous summary holds, as said or as its line was cut). Sentences end at ".", "!" or "?" and a line break,
    not after `ABBREVIATIONS` ("Dr. Okafor"). A line over `MAX_LINE_TOKENS` is cut to the words around the user's
    constraint or request it holds (`_cut`), so it is one again when the next revision reads it. It keeps the
    user's latest standing constraint (its withdrawal outlives the constraint it withdraws), then the others (old
    and new, the newest first) in up to 1/`NEW_SHARE` of `max_tokens` (numbered requests outscore them, and filled
    every revision until the constraint was gone), then the best lines of the new turns in up to another
    1/`NEW_SHARE`, then the best of all lines in what is left, and renders them in their original order; equal
    scores go to the earlier line."""

    model = EXTRACTIVE_MODEL

    def __init__(self, counter: TokenCounter):
        self.counter = counter

    def summarize(self, tenant_id: str, previous: str | None, turns: list[Any], max_tokens: int, *,
                  before_send: Callable[[], None] | None = None) -> SummaryDraft:
        """See `Summarizer.summarize`; it sends nothing, so `before_send` is not called."""
        items: list[tuple[int, int, str]] = []  # (score, position, line)
        standing: list[int] = []   # indexes into items of a user's standing constraints
        seen: set[str] = set()
        pos = 0
        for line in (previous or "").splitlines():
            line = line.strip().removeprefix("- ").strip()
            if line:   # "user: ..." lines keep what a user's words score (a constraint stays a constraint)
                who, sep, said = line.partition(": ")
                said = said or line
                user = _user(who)
                if user and _CONSTRAINT.search(said):
                    standing.append(len(items))
                items.append((self._score(said, user) + 2, pos, self._cut(who + sep if sep else "", said, user)))
                seen.add(self._norm(said))   # a sentence repeated in later turns is kept once
                pos += 1
        first_new = len(items)
        for e in turns:
            who, user = e.role or e.kind, role_source(e.role, e.kind) == "user_explicit"
            for sentence in _SENTENCE.split(e.content.strip()):
                sentence = " ".join(sentence.split())
                if not sentence:
                    continue
                label = f"{who}: "
                line = self._cut(label, sentence, user)
                norms = {self._norm(sentence), self._norm(line[len(label):])}   # as said, and as its line was cut
                if norms & seen or (len(sentence.split()) < 4 and not re.search(r"\d", sentence)
                                    and not (user and (_CONSTRAINT.search(sentence) or _REQUEST.search(sentence)))):
                    continue
                seen |= norms
                if user and _CONSTRAINT.search(sentence):
                    standing.append(len(items))
                items.append((self._score(sentence, user), pos, line))
                pos += 1
        chosen: dict[int, str] = {}   # position -> rendered line
        third = max_tokens // NEW_SHARE
        used = self._fill(chosen, [items[i] for i in standing[-1:]], 0, max_tokens)   # the latest constraint, always
        used = self._fill(chosen, [items[i] for i in standing], used, max(third, used), newest_first=True)  # a third
        used = self._fill(chosen, items[first_new:], used, used + third)    # the newly folded turns: a third more
        self._fill(chosen, items, used, max_tokens)                         # the best of all: the rest
        return SummaryDraft("".join(chosen[p] for p in sorted(chosen)).rstrip("\n"), self.model)

    def _fill(self, chosen: dict[int, str], pool: list[tuple[int, int, str]], used: int, cap: int,
              newest_first: bool = False) -> int:
        """Add `pool`'s lines not yet `chosen`, best score first (earlier line on ties), or the newest first (a
        constraint's latest word: "you can call my landline again" over the "never call me" it withdraws), while
        the summary stays within `cap` tokens. Returns the tokens now used."""
        order = (lambda i: -i[1]) if newest_first else (lambda i: (-i[0], i[1]))
        for score, position, line in sorted(pool, key=order):
            if position in chosen:
                continue
            text = f"- {line}\n"
            tokens = self.counter.count(text)
            if used + tokens <= cap:
                chosen[position] = text
                used += tokens
        return used

    def _cut(self, label: str, said: str, user: bool) -> str:
        """The summary line `label` + `said` (label "user: ", "tool: " or "" for a line of another summary's;
        rendered "- user: said\n") cut to at most `MAX_LINE_TOKENS` tokens by
        `excerpt`: around a user's constraint or request (the first `_CONSTRAINT`, else `_REQUEST` match, so the
        cut line is still one in the next revision), else the start of `said`; whole words, an ellipsis where
        words were left out. A word longer than a line (a dump without spaces) is cut to its first tokens."""
        def fits(text: str) -> bool:
            return self.counter.count(f"- {label}{text}\n") <= MAX_LINE_TOKENS

        cue = user and (_CONSTRAINT.search(said) or _REQUEST.search(said))
        start, end = (cue.start(), cue.end()) if cue else (0, 0)
        cut = excerpt(said, start, end, fits)
        if cut is None:
            head = ("... " if said[:start].strip() else "") + said[start:]
            cut = self.counter.truncate(head, MAX_LINE_TOKENS - 6 - self.counter.count(label)).rstrip() + " ..."
        return label + cut

    @staticmethod
    def _norm(text: str) -> str:
        return " ".join(re.findall(r"\w+", text.lower()))

    @staticmethod
    def _score(sentence: str, from_user: bool) -> int:
        return (3 * bool(re.search(r"\d", sentence)) + 3 * bool(_KEEP.search(sentence))
                + 2 * bool(_DECIDED.search(sentence)) + int(from_user)
                + 5 * (from_user and bool(_CONSTRAINT.search(sentence) or _REQUEST.search(sentence))))


class LLMSummarizer:
    """Summaries from an OpenAI-compatible chat endpoint (`settings.llm_base_url`, `llm_model`, `llm_api_key`;
    timeout `llm_timeout_s`) through `ChatClient`: up to `llm_max_retries` retries of a 429/5xx or timeout (honouring
    Retry-After), the per-endpoint concurrency bound, and its LLM call and token metrics per tenant.
    Any failure (network, HTTP error, empty answer) falls back to `fallback`, and the draft says why; what the
    caller's `before_send` raises does not (it is raised unchanged: the turns may not be sent)."""

    def __init__(self, settings: Settings, counter: TokenCounter, fallback: ExtractiveSummarizer):
        self.model = settings.llm_model
        self.counter = counter
        self.fallback = fallback
        self.client = ChatClient(settings)
        self.template = PROMPT_PATH.read_text()

    def summarize(self, tenant_id: str, previous: str | None, turns: list[Any], max_tokens: int, *,
                  before_send: Callable[[], None] | None = None) -> SummaryDraft:
        """See `Summarizer.summarize`. Raises only what `before_send` raises."""
        prompt = self.template.replace("{{max_tokens}}", str(max_tokens))
        body = (f"Previous summary:\n{previous.strip()}\n\n" if previous else "Previous summary: (none)\n\n") + \
            "New turns:\n" + "\n".join(episode_line(e) for e in turns)
        stopped: list[BaseException] = []

        def check() -> None:
            try:
                if before_send is not None:
                    before_send()
            except BaseException as exc:
                stopped.append(exc)
                raise
        try:
            text = self.client.complete(
                tenant_id, [{"role": "system", "content": prompt}, {"role": "user", "content": body}], Usage(),
                before_send=check, json_object=False, max_tokens=max_tokens).strip()
            if not text:
                raise ValueError("the LLM returned an empty summary")
            if self.counter.count(text) > max_tokens:
                text = self.counter.truncate(text, max_tokens).rstrip()
            return SummaryDraft(text, self.model)
        except Exception as exc:  # any LLM failure: the deterministic fallback keeps compaction going
            if exc in stopped:
                raise
            log.warning("LLM summarizer failed, using the extractive fallback: %s", exc)
            draft = self.fallback.summarize(tenant_id, previous, turns, max_tokens)
            return SummaryDraft(draft.text, draft.model, f"llm failed: {type(exc).__name__}: {str(exc)[:200]}")


def build_summarizer(settings: Settings) -> Summarizer:
    """The LLM summarizer when an LLM is configured (`Settings.llm_configured`: a base URL or a key, as extraction
    decides), else the extractive one (both count with `llm_model`)."""
    counter = TokenCounter.for_model(settings.llm_model)
    extractive = ExtractiveSummarizer(counter)
    return LLMSummarizer(settings, counter, extractive) if settings.llm_configured else extractive
