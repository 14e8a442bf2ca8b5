"""The LLM extractor: one episode in, entities and facts out, through `graphmem.ingest.llm.ChatClient`.

The prompt is a versioned file (`graphmem/prompts/<version>.md`, repair instructions in `<version>.repair.md`),
filled with the tenant's ontology, the episode and its reference time. The reply must parse into `Extraction`
(pydantic; unknown top-level keys are refused, which catches a model echoing the JSON schema back). A reply that
does not parse gets exactly one repair call; if that fails too, `ExtractionMalformed` (a permanent job failure).
Relative dates are resolved against the episode's `occurred_at` (`resolve_time`). Facts come out as `FactIn` with
source "inferred"; the write policy and the core's resolver and temporal rules take it from there. A fact with a
`valid_to` and no `valid_from` says that a fact stopped being true then: it is listed in `Extracted.ends`, and
applying it ends the stored fact (a retraction) instead of asserting one.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from pathlib import Path
from string import Template
from typing import Annotated, Any

import dateparser
from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from graphmem.ingest.llm import ChatClient, Usage, parse_reply
from graphmem.ingest.policy import PolicyRefusal
from graphmem.models import KIND_RE, EntityRef, Episode, FactIn, error_message
from graphmem.ontology import ANY_KIND, LITERAL, Ontology

PROMPTS = Path(__file__).resolve().parents[1] / "prompts"
UTC = timezone.utc


class ExtractionMalformed(Exception):
    """The LLM's output did not parse, even after one repair attempt. Permanent for this job."""


def _text(v: Any) -> Any:
    return str(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


class XEntity(BaseModel):
    """An entity as the LLM returns it."""

    model_config = ConfigDict(extra="ignore")
    ref: str = Field(min_length=1, max_length=40)
    kind: str
    name: str = Field(min_length=1)
    email: str | None = None
    domain: str | None = None
    aliases: list[str] = Field(default_factory=list)


class XFact(BaseModel):
    """A fact as the LLM returns it; `subject`/`object` are entity refs; times are strings resolved later."""

    model_config = ConfigDict(extra="ignore")
    subject: str
    predicate: str
    object: str | None = None
    value: Annotated[str | None, BeforeValidator(_text)] = None
    valid_from: Annotated[str | None, BeforeValidator(_text)] = None
    valid_to: Annotated[str | None, BeforeValidator(_text)] = None
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)


class Extraction(BaseModel):
    """The whole reply: exactly `entities` and `facts` (extra keys, e.g. an echoed schema, are an error)."""

    model_config = ConfigDict(extra="forbid")
    entities: list[XEntity]
    facts: list[XFact]

    @model_validator(mode="after")
    def _refs(self) -> "Extraction":
        refs = {e.ref for e in self.entities}
        for i, f in enumerate(self.facts):
            for side in ("subject", "object"):
                r = getattr(f, side)
                if r is not None and r not in refs:
                    raise ValueError(f"facts[{i}].{side} refers to {r!r}, which is not in entities")
        return self


def _quarter(n: str) -> int:
    return 3 * int(n) - 2


def _half(n: str) -> int:
    return 6 * int(n) - 5


_PART_OF_YEAR = {"early": 1, "mid": 7, "late": 10}
_PERIODS = [(re.compile(r"(?i)(?:in\s+)?" + pattern), first_month) for pattern, first_month in (
    (r"q(?P<n>[1-4])[\s/-]*(?P<y>\d{4})", _quarter), (r"(?P<n>[1-4])q[\s/-]*(?P<y>\d{4})", _quarter),
    (r"(?P<y>\d{4})[\s/-]*q(?P<n>[1-4])", _quarter),
    (r"h(?P<n>[12])[\s/-]*(?P<y>\d{4})", _half), (r"(?P<y>\d{4})[\s/-]*h(?P<n>[12])", _half),
    (r"(?P<n>early|mid|late)[\s-]*(?P<y>\d{4})", _PART_OF_YEAR.__getitem__))]
"""A part of a year as (its pattern, with `n` the part and `y` the year; the month the part starts in, 1-12)."""
_CODE = re.compile(r"(?i)\b(?:[a-z]\d{1,2}|\d[a-z])\b")
"""A letter-and-digit code that no date contains ("H3", "X3", "5Q"): dateparser would read "H3 2022" as March 2022,
so such a phrase is unreadable (a quarter or a half is read by `_PERIODS` first)."""


def _name_error(err: ValidationError, kept: list[int]) -> tuple[str, str] | None:
    """The first error of `err` (an `EntityRef`'s) about the entity's name or an alias, as (field, reason):
    ("name", "a name must not contain ...") or ("aliases[i]", ...), `i` the alias's index in the LLM's list
    (`kept[j]` for the `j`th alias given to `EntityRef`), the reason in `error_message`'s words (a blank alias's is
    "must not be blank ..."); None when the name and aliases are fine."""
    for e in err.errors():
        loc = e["loc"]
        if loc and loc[0] in ("name", "aliases"):
            where = "name" if loc[0] == "name" or len(loc) < 2 else f"aliases[{kept[int(loc[1])]}]"
            return where, error_message(e)
    return None


def resolve_time(text: str | None, reference: datetime) -> datetime | None:
    """An ISO 8601 date/date-time or a relative phrase ("last Tuesday", "since March") as an aware UTC datetime,
    resolved against `reference` (the episode's occurred_at). A date means midnight UTC; a date-time without an
    offset is taken as UTC (the prompt asks for UTC); a year alone ("2023", ISO 8601's reduced precision, or "in
    2023") is its first day, and so is a month alone ("2023-06", "since March").

    A part of a year is the first day of the period it names (`_PERIODS`), whatever the reference time: a quarter
    ("Q3 2023", "2023 Q3", "3Q 2023": Q1 January 1, Q2 April 1, Q3 July 1, Q4 October 1), a half ("H1 2022"
    January 1, "H2 2022" July 1), and "early 2021" January 1, "mid-2022" July 1, "late 2020" October 1. Why the
    start: one rule for every period, the one a year or a month alone already follows, so a date names the moment
    the period began and a fact "since Q3 2023" is never placed after a day it held; early, mid and late are read
    as the start of the part of the year they mostly name (the first quarter, the second half, the last quarter)
    rather than a midpoint no one said. dateparser has no quarters or halves (it read "Q3 2023" as the reference
    time's month plus a few in 2023, and "H2 2022" as 2022-02-01).

    Returns None for None, "", "null", "none", "now", "present". Raises `ValueError` if unreadable (also "Q5 2023",
    "mid-ish 2022", and a letter-and-digit code dateparser would guess at, "H3 2022": `_CODE`), or outside years 1-9999 once in UTC."""
    if text is None or not text.strip() or text.strip().lower() in ("null", "none", "now", "present"):
        return None
    s = text.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            return datetime.combine(date.fromisoformat(s), time(0), UTC)
        d = datetime.fromisoformat(s.replace("Z", "+00:00"))
        return (d if d.tzinfo else d.replace(tzinfo=UTC)).astimezone(UTC)
    except (ValueError, OverflowError):   # OverflowError: outside years 1-9999 once in UTC
        pass
    phrase = re.sub(r"(?i)^(since|from|as of|starting|until|till|to)\s+", "", s)
    year = re.fullmatch(r"(?i)(?:in\s+)?(\d{4})", phrase)
    if year:   # dateparser would take the month (and day) from the reference time
        return datetime(int(year.group(1)), 1, 1, tzinfo=UTC)
    for pattern, first_month in _PERIODS:
        part = pattern.fullmatch(phrase)
        if part:
            return datetime(int(part["y"]), first_month(part["n"].lower()), 1, tzinfo=UTC)
    if _CODE.search(phrase):
        raise ValueError(f"cannot read {s!r} as a date")
    try:
        got = dateparser.parse(phrase, settings={
            "RELATIVE_BASE": reference.astimezone(UTC).replace(tzinfo=None), "PREFER_DATES_FROM": "past",
            "TIMEZONE": "UTC", "TO_TIMEZONE": "UTC", "RETURN_AS_TIMEZONE_AWARE": True, "PREFER_DAY_OF_MONTH": "first"})
        if got is not None:
            return got.astimezone(UTC)
    except OverflowError:
        pass
    raise ValueError(f"cannot read {s!r} as a date")


def entity_kind(kind: str, ontology: Ontology) -> str:
    """The LLM's `kind` as the tenant's ontology writes it: a kind the ontology names, in any case ("person",
    "ORGANIZATION"), is that kind (as a predicate in lower case is that predicate); another one-word kind in one
    case ("team") is capitalised; anything else is returned stripped (and refused as no PascalCase word)."""
    k = kind.strip()
    known = {n.lower(): n for p in ontology.predicates.values() for n in (*p.subject_kinds, *p.object_kinds)
             if n not in (LITERAL, ANY_KIND)}
    if k.lower() in known:
        return known[k.lower()]
    return k.capitalize() if k.isalpha() and (k.islower() or k.isupper()) else k


def _predicate_lines(ontology: Ontology) -> str:
    lines = []
    for p in sorted(ontology.predicates.values(), key=lambda p: p.name):
        lines.append(f"- {p.name}: {', '.join(p.subject_kinds)} -> {', '.join(p.object_kinds)} ({p.cardinality})")
    return "\n".join(lines)


@dataclass
class Extracted:
    """What an extractor produced for one episode: facts to assert, entities to create or enrich, refusals, the LLM
    usage of the job so far, the extractor's name and prompt version, retractions (CRM fields set to null) and notes
    (e.g. why entity disambiguation fell back to the deterministic resolver)."""

    facts: list[FactIn] = field(default_factory=list)
    fact_numbers: list[int] = field(default_factory=list)
    """Each fact's index among the extractor's own output (the LLM reply's `facts`, some of which it refused):
    what refusals name (`extraction.facts[i]`). Empty: a fact's position in `facts` (JSON mappings)."""
    entities: list[EntityRef] = field(default_factory=list)   # to create/enrich even without a fact
    refusals: list[PolicyRefusal] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    extractor: str = "llm"
    prompt_version: str | None = None
    retractions: list = field(default_factory=list)   # graphmem.ingest.mapping.Retraction (JSON mappings only)
    notes: list[str] = field(default_factory=list)    # recorded as the reason of a job that still completes
    partials: dict = field(default_factory=dict)   # fact number -> graphmem.ingest.mapping.Partial (JSON mappings only)
    ends: set = field(default_factory=set)
    """Numbers (as `fact_numbers`) of the facts that give an end and no start ("Dana left Acme in March 2024"):
    not asserted, they end the fact of that subject, predicate and object or value valid at their `valid_to`
    (`graphmem.ingest.apply`), or are refused as `no_current_fact`."""


PROMPTS_WITHOUT_ENDS = frozenset({"extract_v1"})
"""Prompts written before the ended-fact rule (extract_v2): their `valid_from` null means "at the reference time"
whatever `valid_to` says, so such a fact is asserted from then until its `valid_to` (a `valid_to` not after the
reference time is refused as `invalid_date`), as it was when they were the default."""


class LLMExtractor:
    """Extracts facts from text episodes with one LLM call (plus at most one repair call)."""

    def __init__(self, client: ChatClient, prompt_version: str = "extract_v2"):
        """`prompt_version`: the prompt file (graphmem/prompts/<version>.md and its .repair.md). A reply's fact with
        a `valid_to` and no `valid_from` is an end (`Extracted.ends`) unless the prompt is one of
        `PROMPTS_WITHOUT_ENDS`, which read it as true from the reference time until then."""
        self.client = client
        self.prompt_version = prompt_version
        self.ends = prompt_version not in PROMPTS_WITHOUT_ENDS
        self._prompt = Template((PROMPTS / f"{prompt_version}.md").read_text())
        self._repair = Template((PROMPTS / f"{prompt_version}.repair.md").read_text())

    def messages(self, episode: Episode, ontology: Ontology) -> list[dict]:
        """The chat messages for `episode` (one user message built from the prompt file)."""
        text = self._prompt.safe_substitute(
            reference_time=episode.occurred_at.isoformat().replace("+00:00", "Z"), predicates=_predicate_lines(ontology),
            episode_kind=episode.kind, speaker=episode.speaker or episode.role or "unknown", content=episode.content)
        return [{"role": "user", "content": text}]

    def extract(self, tenant_id: str, episode: Episode, ontology: Ontology, out: Extracted | None = None, *,
                before_send: Callable[[], None] | None = None) -> Extracted:
        """Call the LLM and turn its reply into facts, filling `out` (so its `usage` counts the calls made even when
        this raises). `before_send` is called right before every request carrying the episode (the call, its
        retries, the repair call: `ChatClient.complete`), and what it raises is raised unchanged. Raises
        `ExtractionMalformed`, `LLMUnavailable`, `LLMRejected`."""
        out = out or Extracted()
        out.extractor, out.prompt_version = "llm", self.prompt_version
        messages = self.messages(episode, ontology)
        reply = self.client.complete(tenant_id, messages, out.usage, before_send=before_send)
        try:
            parsed = parse_reply(reply, Extraction)
        except ValueError as first:
            messages += [{"role": "assistant", "content": reply[:4000]},
                         {"role": "user", "content": self._repair.safe_substitute(error=str(first)[:500])}]
            reply = self.client.complete(tenant_id, messages, out.usage, before_send=before_send)
            try:
                parsed = parse_reply(reply, Extraction)
            except ValueError as second:
                raise ExtractionMalformed(f"malformed LLM output after one repair attempt: {second}"[:500]) from second
        self._to_facts(parsed, episode, ontology, out)
        return out

    def _to_facts(self, x: Extraction, episode: Episode, ontology: Ontology, out: Extracted) -> None:
        refs: dict[str, EntityRef | None] = {}
        bad_names: dict[str, tuple[str, str]] = {}   # entity ref -> (its field, why): refuses the entity's facts
        for e in x.entities:
            e.kind = entity_kind(e.kind, ontology)
            kept = [i for i, a in enumerate(e.aliases) if a and a.strip()]
            try:
                refs[e.ref] = EntityRef(kind=e.kind, name=e.name, email=e.email, domain=e.domain,
                                        aliases=[e.aliases[i] for i in kept])
            except ValidationError as err:
                if (named := _name_error(err, kept)) is not None:
                    refs[e.ref], bad_names[e.ref] = None, named
                    continue
                try:  # keep the entity without a malformed identifier
                    refs[e.ref] = EntityRef(kind=e.kind, name=e.name)
                except ValidationError:
                    refs[e.ref] = None
        kinds = {e.ref: e.kind for e in x.entities}
        for i, f in enumerate(x.facts):
            fld = f"extraction.facts[{i}]"
            pred = f.predicate.strip().upper()

            def refuse(reason: str, where: str, detail: str) -> None:
                out.refusals.append(PolicyRefusal(reason, f"{fld}.{where}", detail, episode.id, pred[:64]))
            p = ontology.predicates.get(pred)
            if p is None:
                refuse("unknown_predicate", "predicate", f"predicate {pred[:64]} is not in the tenant's ontology")
                continue
            subj, obj = refs.get(f.subject), refs.get(f.object) if f.object else None
            bad = next((r for r in (f.subject, f.object) if r and not KIND_RE.match(kinds[r])), None)
            if bad is not None:
                refuse("invalid_fact", "subject" if bad == f.subject else "object",
                       f"entity kind {kinds[bad][:64]!r} is not a PascalCase word such as Person")
                continue
            named = next(((side, bad_names[r]) for side, r in (("subject", f.subject), ("object", f.object))
                          if r in bad_names), None)
            if named is not None:
                refuse("invalid_name", f"{named[0]}.{named[1][0]}", named[1][1])
                continue
            if subj is None or (f.object and obj is None) or (obj is None) == (f.value is None):
                refuse("invalid_fact", "object", "needs a valid subject and exactly one of object or value")
                continue
            if not p.accepts_subject(kinds[f.subject]) or not p.accepts_object(kinds[f.object] if obj else None):
                refuse("invalid_fact", "subject", f"{p.name} does not take these kinds")
                continue
            try:
                vf = resolve_time(f.valid_from, episode.occurred_at)
            except ValueError:
                refuse("invalid_date", "valid_from", "a date could not be read")
                continue
            try:
                vt = resolve_time(f.valid_to, episode.occurred_at)
            except ValueError:
                refuse("invalid_date", "valid_to", "a date could not be read")
                continue
            # "Dana left Acme in March": the stored fact ends then (a prompt without that rule: valid from the
            # reference time)
            end = self.ends and vf is None and vt is not None
            if vt is not None and not end and vt <= (vf or episode.occurred_at):
                refuse("invalid_date", "valid_to", "valid_to is not after valid_from")
                continue
            try:
                out.facts.append(FactIn(subject=subj, predicate=pred, object=obj, value=f.value, valid_from=vf,
                                        valid_to=vt, confidence=f.confidence, source="inferred",
                                        episode_id=episode.id))
                out.fact_numbers.append(i)
                if end:
                    out.ends.add(i)
            except ValidationError:
                refuse("invalid_fact", "value", "the fact does not validate")
