"""Pydantic models: the single source of each record's shape.

Stored records (`Entity`, `Episode`, `Fact`, `Session`) map one-to-one onto Neo4j node properties
(snake_case). `*In` models are what callers send; they validate before anything touches the store.
All datetimes are timezone-aware UTC; naive datetimes are refused. The stored form of an identifier (name and value
keys, emails, domains, external ids) and what counts as blank are `graphmem.identifiers`; the validators here call it.
"""
from __future__ import annotations

import functools
import re
import unicodedata
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any, Literal

from pydantic import (AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, PrivateAttr,
                      ValidationInfo, field_validator, model_validator)
from pydantic_core import PydanticCustomError

from graphmem import strict_json
from graphmem.identifiers import INVISIBLE_CHARS, blank, domain_name, email_address, trim_blank


_NUMBER = re.compile(r"\s*[-+]?(\d+\.?\d*|\.\d+)\s*")


def _native_datetime(v: Any) -> Any:
    """A `neo4j.time.DateTime` as a native datetime. A number (or a string of one) is refused: pydantic would take
    it as seconds since 1970 (`as_of=2020` as 1970-01-01T00:33:40Z), a silently wrong time, never an ISO 8601 time
    with an offset."""
    if isinstance(v, (int, float)) and not isinstance(v, bool) or isinstance(v, str) and _NUMBER.fullmatch(v):
        raise ValueError("a datetime is an ISO 8601 string with a UTC offset, such as 2020-01-01T00:00:00Z, not a "
                         f"number ({v!r} would be read as seconds since 1970)")
    return v.to_native() if hasattr(v, "to_native") else v


def _as_utc(d: datetime) -> datetime:
    try:
        return d.astimezone(timezone.utc)
    except OverflowError:   # e.g. 9999-12-31T23:00:00-05:00 is past year 9999 in UTC
        raise ValueError("the datetime is outside years 1-9999 once converted to UTC") from None


UtcDatetime = Annotated[AwareDatetime, BeforeValidator(_native_datetime), AfterValidator(_as_utc)]
"""A timezone-aware datetime, normalised to UTC. Accepts `neo4j.time.DateTime` from the driver; refuses a number
(a Unix time, or a year such as 2020, is not taken as a time). A value that falls outside years 1-9999 once
converted to UTC is a validation error (ValueError), not an OverflowError."""

KIND_RE = re.compile(r"^[A-Z][A-Za-z0-9]{0,63}$")
PREDICATE_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
VISIBLE = "[^\\s" + INVISIBLE_CHARS + "]"
"""Field pattern of text that must not be blank: at least one character that is neither whitespace nor one that
renders as nothing in the Basic Multilingual Plane (`graphmem.identifiers.INVISIBLE_CHARS`: controls, invisible
format characters, variation selectors, blank fillers), literal in the class, so the pattern means the same to
pydantic-core, Python's `re` and the ECMA-262 regexes of OpenAPI clients. Characters outside the BMP are not
listed: an ECMA regex without the `u` flag reads them as surrogate pairs. `blank` counts those too, and `visible`
(every `Input` field with this pattern, `Visible` after it elsewhere) refuses them with this pattern's error. A
validation error for it is worded by `error_message`; code checks text with `graphmem.identifiers.blank`."""


PRINTABLE_ASCII = "^[!-~](?:[ -~]*[!-~])?$"
"""Field pattern of a token sent in an HTTP header: printable ASCII (U+0021-U+007E, spaces inside), as the IETF
draft "The Idempotency-Key HTTP Header Field" (draft-ietf-httpapi-idempotency-key-header) types the key, an
sf-string (RFC 8941, section 3.3.3). Servers read header bytes as latin-1, so anything else arrives as other text
than the client sent."""

def visible(v: str | None) -> str | None:
    """`v` (None too: an optional field left out), unless `blank` finds it blank: then the `VISIBLE` pattern's own
    error (`PydanticCustomError` of type string_pattern_mismatch with that pattern, which `error_message` words
    "must not be blank ..."). For what the pattern cannot see: invisible characters outside the BMP ("\U000e0020",
    a tag space). An `AfterValidator` of `Id` and of the path and query ids (`api.ids`), and of every `Input` field
    whose pattern is `VISIBLE`."""
    if v is not None and blank(v):
        raise PydanticCustomError("string_pattern_mismatch", "String should match pattern '{pattern}'",
                                  {"pattern": VISIBLE})
    return v


Visible = AfterValidator(visible)
"""The `visible` check as `Annotated` metadata, after a `VISIBLE` pattern (`Id`, `VisibleText`, `api.ids`)."""

VisibleText = Annotated[str, Field(pattern=VISIBLE), Visible]
"""Text with a visible character: not `blank` (whitespace or invisible characters alone, inside the BMP or outside
it), else a 422 naming it with the `VISIBLE` pattern's error ("must not be blank"). The item type of a list whose
items must not be blank (an entity reference's `aliases` and `external_ids`, a context request's `constraints`):
the error names the item (`constraints[0]`); `Annotated[VisibleText, ...]` adds bounds or checks."""

Id = Annotated[str, Field(min_length=1, max_length=200, pattern=VISIBLE), Visible]
"""An id a caller sends in a body (a user, session, episode, fact or entity id): 1-200 characters, not `blank`
(whitespace or invisible characters alone, inside the BMP or outside it), else a 422 naming the field ("must not be
blank"). An id that names nothing stays the route's 404."""

SameUser = AfterValidator(trim_blank)
"""The one rule for a user id a caller sends, as `Annotated` metadata after its other checks: trimmed of what `blank`
finds blank at either end (`trim_blank`, as an entity's external ids are: schema 21), so "u1\u200b", "\ufeffu1" and
" u1" are user "u1", whose own entity carries the external id "user:u1"; an invisible character inside the id stays.
`UserIdText` in bodies, `api.ids.UserId` and `UserFilter` in query strings."""

UserIdText = Annotated[Id, SameUser]
"""A user id a caller sends in a body (an episode's, a turn's, a session's, a consent's, a search's or a context
window's `user_id`, that of `POST /v1/forget`, of a legal hold and of the memory routes): an `Id` (1-200
characters before trimming; a blank one is a 422 naming the field, "must not be blank"), trimmed by `SameUser`."""

BLANK_WORDS = "must not be blank: needs a character other than whitespace, control or invisible characters"
"""The one wording of blank text refused: the `VISIBLE` pattern's error as `error_message` words it (a field of that
pattern, `visible`, `Id`, `VisibleText`), and the services' own checks of a text argument ("name " + it)."""

_PATTERN_WORDS = {
    VISIBLE: BLANK_WORDS,
    PRINTABLE_ASCII: "must be printable ASCII (letters, digits, punctuation; spaces only inside)",
}


def error_message(error: dict) -> str:
    """The message of one pydantic error (an item of `ValidationError.errors()`), in words where pydantic's would
    quote one of ours (a `VISIBLE` mismatch is "must not be blank: ...", a `PRINTABLE_ASCII` one "must be printable
    ASCII ..."), and a validator's own words without pydantic's "Value error, " before them."""
    if error.get("type") == "string_pattern_mismatch" and (error.get("ctx") or {}).get("pattern") in _PATTERN_WORDS:
        return _PATTERN_WORDS[error["ctx"]["pattern"]]
    msg = error.get("msg", "")
    return msg.removeprefix("Value error, ") if error.get("type") == "value_error" else msg


def predicate_name(v: str) -> str:
    """`v` stripped and upper-cased if it is a predicate name (`PREDICATE_RE`); else `ValueError`."""
    v = v.strip().upper()
    if not PREDICATE_RE.match(v):
        raise ValueError("predicate must be UPPER_SNAKE_CASE, e.g. WORKS_AT")
    return v


def kind_name(v: str) -> str:
    """`v` if it is an entity kind (`KIND_RE`, PascalCase); else `ValueError`."""
    if not KIND_RE.match(v):
        raise ValueError("kind must be a PascalCase word such as Person or Organization")
    return v


PredicateName = Annotated[str, AfterValidator(predicate_name)]
"""A predicate as callers may write it ("works_at" is WORKS_AT); anything else is a validation error."""
KindName = Annotated[str, AfterValidator(kind_name)]
"""An entity kind (PascalCase, e.g. Person); anything else is a validation error."""


def _has_control(v: str) -> bool:
    """Whether `v` holds a control character (Unicode category Cc: NUL, tab, newline, escape, ...)."""
    return any(unicodedata.category(c) == "Cc" for c in v)


def path_segment(v: str, what: str) -> str:
    """`v` if it can be one URL path segment (`/v1/sessions/{id}`, `/v1/admin/tenants/{tenant}`): 1-200
    characters, no surrounding whitespace, no "/", no control characters, not "." or ".." (RFC 3986, 5.2.4: a client
    resolves those as the current and parent path), not `blank`; else `ValueError` naming `what`. Anything else
    would be stored and then unreachable."""
    if not v or v != v.strip() or len(v) > 200 or "/" in v or v in (".", "..") or _has_control(v) or blank(v):
        raise ValueError(f"{what} is 1-200 characters, without surrounding whitespace, '/' or control characters, "
                         "and not '.', '..' or only invisible characters")
    return v



def session_id(v: str) -> str:
    """`v` if it can name a session (`path_segment`); else `ValueError`."""
    return path_segment(v, "a session id")


SessionId = Annotated[str, AfterValidator(session_id)]
"""A session id as `session_id` checks it; anything else is a validation error."""

EpisodeId = Id
"""An episode a write names as its provenance (`Id`): never blank (`""` would read as "none given", and the call would be
recorded as an episode of its own, silently cited instead)."""

Source = Literal["user_explicit", "user_confirmed", "inferred", "system"]
"""Where a fact came from (DESIGN.md, principle 5)."""

EpisodeKind = Literal["message", "text", "json", "tool_result", "event"]
ExtractionStatus = Literal["pending", "running", "done", "skipped", "failed", "dead"]
FactStatus = Literal["current", "closed", "retracted", "corrected", "candidate"]
"""current: open validity; closed: valid_to set by a later value or an explicit end;
retracted: closed by a retraction; corrected: withdrawn from belief (expired_at set) by a correction;
candidate: held until a user confirms it (sensitive inferred facts)."""


def new_id() -> str:
    """A new globally unique id (UUID4, 32 hex characters)."""
    return uuid.uuid4().hex



class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class Input(BaseModel):
    """Base of every model a caller sends (request bodies and the records inside them). Unknown fields are
    refused (422 naming the field): a misspelt `occured_at` would otherwise be dropped and the episode stored
    at another time. A string holding a lone UTF-16 surrogate (JSON's "\\ud800", which Python's JSON decoder
    lets through) is refused as well, naming its field: Neo4j's driver cannot encode it, so it failed as a 500 at
    the first query (`str_max_length` makes pydantic check every string as unicode; no string of a body within
    GRAPHMEM_MAX_BODY_BYTES comes near the bound). A field whose pattern is `VISIBLE` also refuses text that
    `blank` finds blank beyond the pattern (invisible characters outside the BMP), with the pattern's own error."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, str_max_length=2**31 - 1)

    @field_validator("*")
    @classmethod
    def _visible(cls, v: Any, info: ValidationInfo) -> Any:
        return visible(v) if isinstance(v, str) and info.field_name in _visible_fields(cls) else v


@functools.cache
def _visible_fields(model: type[BaseModel]) -> frozenset[str]:
    """The fields of `model` whose pattern is `VISIBLE`."""
    return frozenset(name for name, f in model.model_fields.items()
                     if any(getattr(m, "pattern", None) == VISIBLE for m in f.metadata))


ROLE_SOURCES: dict[str, Source] = {"user": "user_explicit", "human": "user_explicit",
                                   "assistant": "inferred", "agent": "inferred", "ai": "inferred",
                                   "model": "inferred", "tool": "system", "function": "system", "system": "system",
                                   "developer": "system"}
"""The source an episode takes from its `role` when it names none: what a user said is theirs, what the assistant
said was generated (OpenAI's and Gemini's names for it: assistant, model), a tool's, the system's or the developer's
is a system of record. Any other role, or none, is the user's."""


def role_source(role: str | None, kind: str | None = None) -> Source:
    """The source a turn of `role` (any case, blanks around) and episode `kind` takes when it names none
    (`ROLE_SOURCES`): "user_explicit" for a user ("user", "Human", no role), "inferred" for the assistant
    ("assistant", "model", "ai", "agent"), "system" for a tool, the system or the developer, or a `tool_result`
    without a role."""
    role = (role or "").strip().lower()
    return ROLE_SOURCES.get(role, "system" if not role and kind == "tool_result" else "user_explicit")


class Spoken(Input):
    """Base of an episode as a caller sends it: `source`, when not given, follows `role` (`ROLE_SOURCES`; a
    `tool_result` without a role is `system`), so that an assistant's own words are never cited as the user's.
    `source_given` says whether the caller named it (a replay compares a given source only)."""

    _source_given: bool = PrivateAttr(default=True)

    @property
    def source_given(self) -> bool:
        """Whether the caller sent `source` (False: it was derived from `role`)."""
        return self._source_given

    @model_validator(mode="after")
    def _source_by_role(self):
        if "source" not in self.model_fields_set:
            self.source = role_source(self.role, self.kind)
            self._source_given = False
        return self


# --------------------------------------------------------------------------------------------
# Entities
# --------------------------------------------------------------------------------------------
BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
"""The bidirectional controls (Unicode UAX #9): the embeddings and overrides U+202A-U+202E, the isolates
U+2066-U+2069 and the marks U+200E, U+200F, U+061C. In a name they reorder how it is displayed ("Alice\u202eecilA"
shows as "AliceAlice": a Trojan-Source style spoof), so a name or an alias holding one is refused (`_printable`)."""


def _printable(name: str) -> str:
    """`name` unless it holds a control character (Unicode category Cc: NUL, tab, newline, escape, ...), which
    no name is spelt with and which would print as nothing, or break a line, in every list that shows it, or a
    bidirectional control (`BIDI_CONTROLS`), which would show it reordered. Raises `ValueError` saying which."""
    if _has_control(name):
        raise ValueError("a name must not contain control characters (NUL, tab, newline, ...)")
    if not BIDI_CONTROLS.isdisjoint(name):
        raise ValueError("a name must not contain bidirectional controls (U+202A-U+202E, U+2066-U+2069, U+200E, "
                         "U+200F, U+061C), which reorder how it is displayed")
    return name


class EntityRef(Input):
    """How a caller names an entity: by `id`, or by kind + name (+ strong identifiers), or by a strong identifier
    alone (`email`, `domain` or `external_ids`, `kind` optional) when the entity is already stored.

    Resolution order (DESIGN.md "Ingestion"): `id`; strong identifiers (`email`, `domain`,
    `external_ids`); normalised name or alias within the kind; otherwise a new entity, which needs a kind and a
    name (a reference without a name that matches nothing is `NotFound`).
    """

    id: Id | None = None
    kind: str | None = Field(default=None, description="PascalCase kind label, e.g. Person, Organization, Deal.")
    name: str | None = None
    aliases: list[Annotated[VisibleText, AfterValidator(_printable)]] = Field(default_factory=list)  # aliases[i]
    email: str | None = Field(default=None, description=(
        "Stored in one form (`email_address`): lower-cased, the local part in NFKC, an internationalised domain in "
        "Unicode, so 'ann@xn--bcher-kva.example' is 'ann@bücher.example'."))
    domain: str | None = Field(default=None, description=(
        "A host name, stored in one form (`domain_name`): lower-cased, without 'www.', an internationalised one in "
        "Unicode as an email's domain, so 'xn--bcher-kva.example' is 'bücher.example'."))
    external_ids: list[VisibleText] = Field(default_factory=list, description=(
        "'system:id' strings, e.g. 'hubspot:123', kept without the whitespace and invisible characters at their "
        "ends."))
    summary: str | None = Field(default=None, pattern=VISIBLE)

    @field_validator("kind")
    @classmethod
    def _kind(cls, v: str | None) -> str | None:
        return v if v is None else kind_name(v)

    @field_validator("name")
    @classmethod
    def _name(cls, v: str | None) -> str | None:
        return _printable(v.strip()) if visible(v) else v   # blank: the `VISIBLE` pattern's error

    @field_validator("external_ids")
    @classmethod
    def _external_ids(cls, v: list[str]) -> list[str]:
        """Trimmed of what `blank` finds blank at either end (`trim_blank`: "crm:contact:c1 " and
        "crm:contact:c1\u200b" are crm:contact:c1; one inside, "crm:\u200bc1", stays), repeats dropped. A blank one
        (whitespace or invisible characters alone, a key every entity sent with it merged into) is refused before,
        by `VisibleText`."""
        return list(dict.fromkeys(trim_blank(k) for k in v))

    @field_validator("email")
    @classmethod
    def _email(cls, v: str | None) -> str | None:
        return v if v is None else email_address(v)

    @field_validator("domain")
    @classmethod
    def _domain(cls, v: str | None) -> str | None:
        return v if v is None else domain_name(v)

    @model_validator(mode="after")
    def _enough(self) -> "EntityRef":
        if self.id is None and self.name is None and not (self.email or self.domain or self.external_ids):
            raise ValueError("an entity reference needs an id, a kind and a name, or a strong identifier (email, "
                             "domain or external_ids) of a stored entity")
        if self.id is None and self.name is not None and self.kind is None:
            raise ValueError("an entity reference with a name needs its kind")
        return self


class Entity(_Record):
    """A stored entity node (`:Entity` plus its kind label)."""

    id: str
    tenant_id: str
    kind: str
    name: str
    name_key: str
    aliases: list[str] = Field(default_factory=list)
    email: str | None = None
    domain: str | None = None
    external_ids: list[str] = Field(default_factory=list)
    summary: str | None = None
    created_at: UtcDatetime
    updated_at: UtcDatetime


# --------------------------------------------------------------------------------------------
# Episodes and sessions
# --------------------------------------------------------------------------------------------
def json_content(content: str, info: ValidationInfo) -> str:
    """A field validator of an episode's `content`: a `json` episode's content must parse now (its mapping reads it
    later, when an error is too late). Raises ValueError, which pydantic reports at the field."""
    if info.data.get("kind") == "json":
        try:
            strict_json.loads(content)
        except ValueError as exc:   # strict_json: NaN, Infinity, too deep ... are JSONDecodeErrors too
            raise ValueError(f"an episode of kind json must hold a JSON document ({exc.msg})") from None
    return content


class EpisodeIn(Spoken):
    """An episode as a caller sends it. `occurred_at` is the reference time (UTC-aware). `content` and
    `idempotency_key` hold more than whitespace; `source` defaults by `role` (`Spoken`)."""

    kind: EpisodeKind = "message"
    content: str = Field(min_length=1, pattern=VISIBLE)
    occurred_at: UtcDatetime
    session_id: SessionId | None = None
    user_id: UserIdText | None = None
    role: str | None = Field(default=None, max_length=50, pattern=VISIBLE,
                             description="user, assistant, tool, system ...")
    speaker: str | None = Field(default=None, max_length=200, pattern=VISIBLE,
                                description="display name of the speaker")
    idempotency_key: str | None = Field(default=None, min_length=1, max_length=200, pattern=VISIBLE)
    source: Source = Field(default="user_explicit", description="default by role: user -> user_explicit, "
                           "assistant -> inferred, tool or system -> system")
    agent_version: str | None = None
    prompt_version: str | None = None
    tool_version: str | None = None

    @field_validator("content")
    @classmethod
    def _json_is_json(cls, v: str, info: ValidationInfo) -> str:
        return json_content(v, info)


class Episode(_Record):
    """A stored episode node."""

    id: str
    tenant_id: str
    kind: EpisodeKind
    content: str
    occurred_at: UtcDatetime
    ingested_at: UtcDatetime
    session_id: str | None = None
    user_id: str | None = None
    role: str | None = None
    speaker: str | None = None
    idempotency_key: str
    source: Source = "user_explicit"
    token_count: int = 0
    extraction_status: ExtractionStatus = "pending"
    retain_until: UtcDatetime | None = None
    legal_hold: bool = False
    agent_version: str | None = None
    prompt_version: str | None = None
    tool_version: str | None = None


class Session(_Record):
    """A conversation session: tenant + user + session id (two browser tabs are two sessions)."""

    id: str
    tenant_id: str
    user_id: str | None = None
    agent_id: str | None = None
    created_at: UtcDatetime
    last_active_at: UtcDatetime
    version: int = 0


# --------------------------------------------------------------------------------------------
# Facts
# --------------------------------------------------------------------------------------------
class FactIn(Input):
    """A fact assertion: subject, predicate and either an object entity or a literal `value`.

    `valid_from` defaults to the source episode's `occurred_at`. `valid_to` closes the fact in the
    world (an explicitly ended interval). `episode_id` is the provenance and is required by the store.
    """

    subject: EntityRef
    predicate: str
    object: EntityRef | None = None
    value: str | None = None
    valid_from: UtcDatetime | None = None
    valid_to: UtcDatetime | None = None
    confidence: float = Field(default=1.0, ge=0.0, le=1.0, strict=True)   # "0.5" or true is a 422
    source: Source = "user_explicit"
    statement: str | None = Field(default=None, pattern=VISIBLE)
    episode_id: EpisodeId | None = None

    @field_validator("predicate")
    @classmethod
    def _predicate(cls, v: str) -> str:
        return predicate_name(v)

    @field_validator("value")
    @classmethod
    def _value(cls, v: str | None) -> str | None:
        return visible(v)   # blank: the `VISIBLE` pattern's error, "must not be blank ..."

    @field_validator("valid_to")
    @classmethod
    def _after_valid_from(cls, v: datetime | None, info: ValidationInfo) -> datetime | None:
        start = info.data.get("valid_from")
        if v is not None and start is not None and v <= start:
            raise ValueError("valid_to must be after valid_from (a validity interval is half-open, [from, to))")
        return v

    @model_validator(mode="after")
    def _object_xor_value(self) -> "FactIn":
        if (self.object is None) == (self.value is None):
            raise ValueError("a fact needs exactly one of object (an entity) or value (a literal)")
        return self


class Fact(_Record):
    """A stored, reified fact node with both time axes.

    Valid time: `valid_from`/`valid_to` (when it was true in the world).
    Transaction time: `recorded_at` (when graphmem first believed it), `closed_at` (when graphmem first
    learned that it had ended), `expired_at` (when graphmem stopped believing it at all: a correction). When
    history arriving out of order (or a retraction) moves the end of a closed fact, `prior_valid_to` and
    `prior_status` are the end and status believed until `reclosed_at`, so reads at an earlier `known_at` see them
    (the latest such move only: reads before an earlier move see the end of the move after it).
    `status` says how the interval ends as recorded, not whether the fact holds now: `current` has no end (one that
    starts in the future is `current` too), `closed` an end (past or future), `retracted` an end a retraction gave,
    `corrected` and `candidate` are not believed. Whether a fact holds at a time is its interval: reads take `as_of`.
    """

    id: str
    tenant_id: str
    predicate: str
    subject_id: str
    object_id: str | None = None
    value: str | None = None
    object_key: str
    statement: str
    valid_from: UtcDatetime
    valid_to: UtcDatetime | None = None
    recorded_at: UtcDatetime
    closed_at: UtcDatetime | None = None
    prior_valid_to: UtcDatetime | None = None
    prior_status: FactStatus | None = None
    reclosed_at: UtcDatetime | None = None
    value_retraction: bool | None = Field(default=None, exclude=True)
    """Internal (not in answers): retracted by a retraction that named this value only (graphmem.temporal)."""
    expired_at: UtcDatetime | None = None
    last_confirmed_at: UtcDatetime | None = None
    retain_until: UtcDatetime | None = None
    confidence: float
    source: Source
    fact_class: str
    status: FactStatus

    def as_known_at(self, known_at: datetime | None) -> "Fact":
        """This fact as graphmem believed it at `known_at` (transaction time, UTC; None: now, unchanged): an end
        learned later is not shown (`valid_to` None, status current), an end moved later shows the end believed
        then (`prior_valid_to`), a correction made later leaves it current or closed. The transaction-time fields
        themselves stay as recorded. Reads that take `known_at` answer with this."""
        if known_at is None or self.status == "candidate":
            return self
        valid_to, status = self.valid_to, self.status
        if self.closed_at is None or self.closed_at > known_at:
            valid_to = None
        elif self.reclosed_at is not None and self.reclosed_at > known_at:
            valid_to, status = self.prior_valid_to, self.prior_status or "closed"
        if valid_to is None:
            status = "current"
        elif status == "corrected" and (self.expired_at is None or self.expired_at > known_at):
            status = "closed"
        if (valid_to, status) == (self.valid_to, self.status):
            return self
        return self.model_copy(update={"valid_to": valid_to, "status": status})


ProvenanceRole = Literal["assertion", "confirmation", "retraction", "correction"]
"""What a provenance episode did to its fact: said it, said it again, ended it (retraction), said it was wrong."""
SUPPORTING_ROLES: tuple[str, ...] = ("assertion", "confirmation")
"""Provenance roles of episodes that said a fact is true; a retraction or correction said it ended or was wrong. Only
these put a fact in a search scope or a window's view and are cited (cypher/search/rank, cypher/recall/*, and
cypher/governance/beliefs and facts_of_episodes, which spell the list out as a literal)."""


class Provenance(_Record):
    """One `(Fact)-[:DERIVED_FROM]->(Episode)` edge: which episode said it, when, how sure, from what source."""

    episode_id: str
    occurred_at: UtcDatetime
    recorded_at: UtcDatetime
    source: Source
    confidence: float
    role: ProvenanceRole = "assertion"
    session_id: str | None = None
    episode_kind: EpisodeKind | None = None
    content: str | None = None


class AssertOutcome(_Record):
    """What one assertion did. `action` is one of:
    created (a new fact, nothing closed), superseded (a new fact that closed `closed_fact_id`),
    history (an out-of-order older value stored closed), duplicate (provenance added to `fact_id`; a stronger
    source or confidence strengthens it, and an end it gave closes it: `closed_fact_id` == `fact_id`),
    retracted, corrected, rejected (not stored; `reason` says why), candidate (held for confirmation).
    """

    action: Literal["created", "superseded", "history", "duplicate", "retracted", "corrected", "rejected", "candidate"]
    fact_id: str | None = None
    closed_fact_id: str | None = None
    reason: str | None = None


class Degraded(BaseModel):
    """A source that was skipped, failed or was too slow; the answer was built without it (DESIGN principle 7).
    In a search answer `source` is a retriever (`vector`, `fulltext`); in a context window it is `search` or
    `search.<retriever>`."""

    source: str = Field(examples=["vector"])
    reason: str = Field(examples=["no embedder configured (GRAPHMEM_EMBEDDER=none)"])
