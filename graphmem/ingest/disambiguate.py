"""LLM disambiguation of entity mentions the deterministic resolver cannot settle (DESIGN.md "Entity resolution":
strong identifiers, then names and aliases within kind, "an LLM only for what stays ambiguous").

A mention (an `EntityRef` the LLM extractor produced for a fact) is *ambiguous* when all of these hold:
- it has no strong identifier (`id`, `email`, `domain`, `external_ids`): those always go to the resolver;
- no entity of the tenant owns its normalised name as a name or alias within its kind (an exact match: the resolver
  takes it);
- the tenant has entities of the same kind whose names or aliases are *near* it: found through the full-text index
  `entity_text` (the tenant's token required inside Lucene, `cypher/entities/candidates.cypher`) and kept when their
  token similarity (`similarity`) is at least `settings.disambiguation_min_similarity` (0..1, default 0.75).
  "Dana" is near "Dana Smith" and "Dana Lee"; "Acme Corp" is near "ACME Corporation"; "Dana Smith" is not near
  "Dana Lee" (0.5).
Every ambiguous mention of one episode goes to the LLM in ONE chat call (prompt `graphmem/prompts/<version>.md`,
`<version>` = `settings.disambiguation_prompt`) with its candidates (the `settings.disambiguation_max_candidates` most
similar: id, name, aliases, kind, summary) and the episode text. The reply must parse into `Answer` and name,
for every mention, one of its own candidates' ids or "new"; a reply that does not gets exactly one repair call
(`<version>.repair.md`). A chosen candidate replaces the mention by `EntityRef(id=...)` in the facts before they are
asserted (no alias is added: the short name stays ambiguous); "new" leaves the mention to the deterministic
resolver. If the call fails (after the client's retries), is rejected, or is malformed after the repair, every
mention goes to the deterministic resolver and `Disambiguated.fallback_reason` says why (the worker records it on the
job, which still completes). Tokens and cost of these calls are added to the job's `Usage`.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from string import Template

from pydantic import BaseModel, ConfigDict, Field

from graphmem.identifiers import name_key
from graphmem.ingest.llm import ChatClient, LLMRejected, LLMUnavailable, Usage, parse_reply
from graphmem.models import EntityRef, Episode, FactIn
from graphmem.recall.lucene import escape
from graphmem.settings import PROMPTS, Settings
from graphmem.store import Database
from graphmem.store.db import Tx
from graphmem.store.entities import alias_key
from graphmem.store.fulltext import fold, tenant_query, words

# The prompt version, the similarity threshold and the candidate cap are settings (graphmem/settings.py:
# `disambiguation_prompt`, `disambiguation_min_similarity`, `disambiguation_max_candidates`).

FETCH = 25
"""Full-text hits read per mention before the similarity filter."""

MAX_QUERY_WORDS = 12
"""Most words of a mention's name put in its full-text query (bounds the Lucene clause count)."""

NEW = "new"
_STOP = frozenset({"the", "of", "and", "&"})


class DisambiguationMalformed(Exception):
    """The LLM's disambiguation answer did not parse or named ids that were not offered, even after one repair."""


@dataclass
class Candidate:
    """An existing entity a mention might be: id, kind, name, aliases, summary; `similarity` in [0, 1]."""

    id: str
    kind: str
    name: str
    aliases: list[str]
    summary: str | None
    similarity: float


@dataclass
class Mention:
    """One ambiguous mention: its handle in the prompt ("m1", ...), the reference and its candidates (best first)."""

    key: str
    ref: EntityRef
    candidates: list[Candidate]


@dataclass
class Disambiguated:
    """What `Disambiguator.apply` did for one episode.

    facts: the facts to assert (chosen mentions replaced by `EntityRef(id=...)`); mentions: the ambiguous mentions
    sent to the LLM (none: no call was made); chosen: mention handle -> entity id (None = "new");
    fallback_reason: why the deterministic resolver decided every mention instead (None if the LLM answered).
    """

    facts: list[FactIn]
    mentions: list[Mention] = field(default_factory=list)
    chosen: dict[str, str | None] = field(default_factory=dict)
    fallback_reason: str | None = None


class Pick(BaseModel):
    """One mention's answer: its handle and a candidate id or "new"."""

    model_config = ConfigDict(extra="forbid")
    mention: str = Field(min_length=1, max_length=20)
    entity_id: str = Field(min_length=1, max_length=100)


class Answer(BaseModel):
    """The whole reply: exactly `choices` (extra keys, e.g. an echoed schema, are an error)."""

    model_config = ConfigDict(extra="forbid")
    choices: list[Pick]


# ---- similarity -----------------------------------------------------------------------------------
def tokens(name: str) -> list[str]:
    """The words of a name for similarity: `name_key` of the name as search folds it (`graphmem.store.fulltext.fold`:
    "José Müller" is "jose muller", as the index holds it) split on spaces, dots and hyphens, minus "the", "of",
    "and"."""
    return [t for t in re.split(r"[\s.\-]+", name_key(fold(name))) if t and t not in _STOP]


def _same_word(a: str, b: str) -> bool:
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) == 1:                 # an initial: "J." ~ "John"
        return long_.startswith(short)
    return len(short) >= 3 and long_.startswith(short)     # "corp" ~ "corporation", "intl" no


def similarity(a: str, b: str) -> float:
    """Token overlap of two names in [0, 1]: the share of the shorter name's words that match a distinct word of the
    longer one (equal, an initial, or a prefix of at least 3 letters). "Dana" ~ "Dana Smith" = 1.0,
    "Acme Corp" ~ "ACME Corporation" = 1.0, "Dana Smith" ~ "Dana Lee" = 0.5, "Globex" ~ "Initech" = 0.0."""
    ta, tb = tokens(a), tokens(b)
    if not ta or not tb:
        return 0.0
    short, long_ = sorted((ta, tb), key=len)
    free = list(long_)
    matched = 0
    for t in short:
        hit = next((i for i, u in enumerate(free) if _same_word(t, u)), None)
        if hit is not None:
            matched += 1
            free.pop(hit)
    return matched / len(short)


def lucene_query(name: str, tenant_id: str) -> str | None:
    """The escaped Lucene query finding near names in tenant `tenant_id`'s terms (`graphmem.store.fulltext`): each
    word (the first `MAX_QUERY_WORDS`), OR-ed with its prefix form (`corp*`) when it has at least 3 letters. None
    when the name has no words. The words are split as the index's terms are (`graphmem.store.fulltext.words`, which
    keeps an inner apostrophe: "o'sullivan", the term of a stored "O'Sullivan"), and also as `tokens` splits them
    for similarity (`name_key` drops punctuation and case-folds: "osullivan", "strasse", the terms of a stored
    "OSullivan" or "Strasse", names of similarity 1.0), each form once."""
    forms = [w for w in words(name) if w not in _STOP][:MAX_QUERY_WORDS] + tokens(name)[:MAX_QUERY_WORDS]
    parts = []
    for t in dict.fromkeys(forms):
        e = escape(t)
        parts.append(e)
        if len(t) >= 3:
            parts.append(e + "*")
    return tenant_query(tenant_id, parts)


def _mention_key(ref: EntityRef) -> tuple[str, str]:
    return (ref.kind or "", name_key(ref.name or ""))


def eligible(ref: EntityRef) -> bool:
    """True when only names can resolve `ref`: no id, email, domain or external id."""
    return not (ref.id or ref.email or ref.domain or ref.external_ids) and bool(ref.kind and ref.name)


def find_ambiguous(tx: Tx, tenant_id: str, refs: Sequence[EntityRef], *, min_similarity: float,
                   max_candidates: int) -> list[Mention]:
    """The ambiguous mentions among `refs` (see the module docstring), handles "m1", "m2", ... in input order, one
    per distinct (kind, normalised name), each with at most `max_candidates` candidates of similarity at least
    `min_similarity` (0..1), most similar first. One read query whatever the number of refs. Raises nothing of its
    own."""
    seen: dict[tuple[str, str], EntityRef] = {}
    for ref in refs:
        if eligible(ref) and _mention_key(ref)[1]:
            seen.setdefault(_mention_key(ref), ref)
    rows = []
    order = list(seen.values())
    for i, ref in enumerate(order):
        q = lucene_query(ref.name or "", tenant_id)
        if q:
            rows.append({"idx": i, "kind": ref.kind, "alias_key": alias_key(ref.kind, name_key(ref.name)), "lucene": q})
    if not rows:
        return []
    found = tx.rows("entities/candidates", tenant_id=tenant_id, mentions=rows, fetch=FETCH)
    out: list[Mention] = []
    for r in sorted(found, key=lambda r: r["idx"]):
        if r["exact"]:
            continue
        ref = order[r["idx"]]
        names = [ref.name or "", *ref.aliases]
        cands = []
        for c in r["candidates"]:
            sim = max(similarity(n, cn) for n in names for cn in [c["name"], *(c.get("aliases") or [])])
            if sim >= min_similarity:
                cands.append(Candidate(c["id"], c["kind"], c["name"], list(c.get("aliases") or []), c.get("summary"),
                                       round(sim, 3)))
        if cands:
            cands.sort(key=lambda c: (-c.similarity, c.name, c.id))
            out.append(Mention(f"m{len(out) + 1}", ref, cands[:max_candidates]))
    return out


# ---- the LLM call -----------------------------------------------------------------------------------
def parse(reply: str, mentions: Sequence[Mention]) -> dict[str, str | None]:
    """Mention handle -> chosen entity id (None for "new") from the LLM's reply. `ValueError` (with a message fit for
    the repair prompt) when it is not the JSON object asked for, misses or repeats a mention, names an unknown
    mention, or picks an id that is not one of that mention's candidates."""
    answer = parse_reply(reply, Answer)
    by_key = {m.key: m for m in mentions}
    out: dict[str, str | None] = {}
    for i, p in enumerate(answer.choices):
        m = by_key.get(p.mention)
        if m is None:
            raise ValueError(f"choices[{i}].mention {p.mention[:20]!r} is not one of {', '.join(by_key)}")
        if p.mention in out:
            raise ValueError(f"choices[{i}]: mention {p.mention} is answered twice")
        if p.entity_id != NEW and p.entity_id not in {c.id for c in m.candidates}:
            raise ValueError(f"choices[{i}].entity_id {p.entity_id[:40]!r} is not a candidate of {p.mention}; "
                             f"use one of its candidates' ids or \"new\"")
        out[p.mention] = None if p.entity_id == NEW else p.entity_id
    missing = [k for k in by_key if k not in out]
    if missing:
        raise ValueError(f"no choice for {', '.join(missing)}")
    return out


class Disambiguator:
    """Sends an episode's ambiguous mentions to the LLM in one call (plus at most one repair call)."""

    def __init__(self, client: ChatClient, settings: Settings):
        """`settings` gives `disambiguation_prompt` (the prompt files' name), `disambiguation_min_similarity` and
        `disambiguation_max_candidates`. Raises `FileNotFoundError` naming the setting when a prompt file is missing
        (e.g. settings built with `model_copy`, which skips validation)."""
        self.client = client
        self.prompt_version = settings.disambiguation_prompt
        self.min_similarity = settings.disambiguation_min_similarity
        self.max_candidates = settings.disambiguation_max_candidates
        files = [PROMPTS / f"{self.prompt_version}{suffix}.md" for suffix in ("", ".repair")]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise FileNotFoundError(f"disambiguation_prompt={self.prompt_version!r}: no prompt file "
                                    f"{', '.join(missing)}")
        self._prompt, self._repair = (Template(f.read_text()) for f in files)

    def messages(self, episode: Episode, mentions: Sequence[Mention]) -> list[dict]:
        """The chat messages: one user message with the episode and the mentions as a JSON list
        ([{mention, kind, name, aliases, candidates: [{id, kind, name, aliases, summary}]}])."""
        listing = [{"mention": m.key, "kind": m.ref.kind, "name": m.ref.name, "aliases": m.ref.aliases,
                    "candidates": [{"id": c.id, "kind": c.kind, "name": c.name, "aliases": c.aliases,
                                    "summary": c.summary} for c in m.candidates]} for m in mentions]
        text = self._prompt.safe_substitute(
            reference_time=episode.occurred_at.isoformat().replace("+00:00", "Z"), episode_kind=episode.kind,
            speaker=episode.speaker or episode.role or "unknown", content=episode.content,
            mentions=json.dumps(listing, ensure_ascii=False, indent=1))
        return [{"role": "user", "content": text}]

    def choose(self, tenant_id: str, episode: Episode, mentions: Sequence[Mention], usage: Usage, *,
               before_send: Callable[[], None] | None = None) -> dict[str, str | None]:
        """Mention handle -> chosen entity id (None = "new"). Every call made is counted in `usage`. `before_send`
        is called right before every request carrying the episode (`ChatClient.complete`; its exception is raised
        unchanged). Raises `DisambiguationMalformed` (after one repair), `LLMUnavailable`, `LLMRejected`."""
        messages = self.messages(episode, mentions)
        reply = self.client.complete(tenant_id, messages, usage, before_send=before_send)
        try:
            return parse(reply, mentions)
        except ValueError as first:
            messages += [{"role": "assistant", "content": reply[:4000]},
                         {"role": "user", "content": self._repair.safe_substitute(error=str(first)[:500])}]
            reply = self.client.complete(tenant_id, messages, usage, before_send=before_send)
            try:
                return parse(reply, mentions)
            except ValueError as second:
                raise DisambiguationMalformed(
                    f"malformed disambiguation output after one repair attempt: {second}"[:500]) from second

    def apply(self, db: Database, tenant_id: str, episode: Episode, facts: list[FactIn], usage: Usage, *,
              before_send: Callable[[], None] | None = None) -> Disambiguated:
        """Disambiguate the subjects and objects of `facts` (one read query; one LLM call only if some mention is
        ambiguous). Never raises for LLM trouble: it falls back to the deterministic resolver with a reason.
        `before_send`: as for `choose`; what it raises is raised unchanged (no fallback)."""
        refs = [r for f in facts for r in (f.subject, f.object) if r is not None]
        mentions = db.read(lambda tx: find_ambiguous(tx, tenant_id, refs, min_similarity=self.min_similarity,
                                                     max_candidates=self.max_candidates))
        out = Disambiguated(facts=facts, mentions=mentions)
        if not mentions:
            return out
        try:
            out.chosen = self.choose(tenant_id, episode, mentions, usage, before_send=before_send)
        except (DisambiguationMalformed, LLMUnavailable, LLMRejected) as exc:
            out.fallback_reason = (f"entity disambiguation fell back to the deterministic resolver: "
                                   f"{type(exc).__name__}: {exc}")[:1000]
            return out
        ids = {_mention_key(m.ref): out.chosen[m.key] for m in mentions if out.chosen.get(m.key)}
        if not ids:
            return out

        def swap(ref: EntityRef | None) -> EntityRef | None:
            if ref is None or not eligible(ref):
                return ref
            chosen = ids.get(_mention_key(ref))
            return EntityRef(id=chosen) if chosen else ref
        out.facts = [f.model_copy(update={"subject": swap(f.subject), "object": swap(f.object)}) for f in facts]
        return out
