"""The predicate registry: which predicates exist, their cardinality, kinds, fact class and sensitivity.

A default CRM ontology ships in `graphmem/data/ontology_crm.json`; a tenant extends it with its own
predicates (stored as `:Predicate` nodes in its tenant, see `cypher/ontology/`). Single-valued predicates
are the ones supersession applies to (DESIGN.md, "Temporal rules").
"""
from __future__ import annotations

import json
import string
from datetime import timedelta
from pathlib import Path
from typing import Literal, get_args

from pydantic import BaseModel, Field, ValidationInfo, field_validator

from graphmem.errors import InvalidInput
from graphmem.models import KIND_RE, PREDICATE_RE, VISIBLE

LITERAL = "literal"
ANY_KIND = "*"

Sensitivity = Literal["none", "health", "finance", "legal"]
# The sensitive fact classes (DESIGN.md "Ingestion": health, finance, legal): a predicate's `sensitivity` names one.
# An inferred fact of a sensitive predicate is held as a candidate (graphmem.store.facts); a fact of a sensitive
# class enters a context window only through a provenance episode that session may see (graphmem.recall.models.Viewer).
SENSITIVE_CLASSES: tuple[str, ...] = tuple(s for s in get_args(Sensitivity) if s != "none")

TEMPLATE_FIELDS = ("subject", "object", "predicate")
"""The fields a predicate's sentence template names, each plain: `{subject}`, never `{subject:>9}`, `{subject!r}`,
`{subject.upper}` or `{object[0]}` (`str.format` would run those: a width of 10^9 built a 1 GB statement)."""


def _template_parts(template: str) -> list[tuple[str, str | None, str]]:
    """(literal text, plain field name or None, the replacement field as written) per part of `template`, by
    `string.Formatter.parse` (`{{` and `}}` are literal braces). Raises ValueError for unbalanced braces."""
    parts = []
    for literal, field, spec, conversion in string.Formatter().parse(template):
        if field is None:
            parts.append((literal, None, ""))
            continue
        written = "{" + field + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        plain = field if field in TEMPLATE_FIELDS and not spec and not conversion else None
        parts.append((literal, plain, written))
    return parts


class Predicate(BaseModel):
    """One predicate. `object_kinds` may contain "literal" (the object is a value, not an entity);
    a kind of "*" accepts any entity kind. `ttl_days` overrides the fact class's default TTL. `symmetric`: the
    relation holds both ways (KNOWS): the pair has one fact whichever way it is stated (`graphmem.store.facts`), and
    reads that ask about one end (`RecallService.who_at`) find it from either."""

    name: str
    cardinality: Literal["single", "multi"]
    subject_kinds: list[str]
    object_kinds: list[str]
    fact_class: str
    sensitivity: Sensitivity = "none"
    template: str = Field(default="{subject} {predicate} {object}", pattern=VISIBLE)
    ttl_days: int | None = Field(default=None, ge=1)
    symmetric: bool = Field(default=False, strict=True, description="holds both ways (A KNOWS B: B knows A); "
                            "\"who at X\" then finds a member at either end of the fact")

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not PREDICATE_RE.match(v):
            raise ValueError("predicate name must be UPPER_SNAKE_CASE")
        return v

    @field_validator("template")
    @classmethod
    def _plain_fields(cls, v: str) -> str:
        """Only plain `{subject}`, `{object}` and `{predicate}` fields (ValueError otherwise, unbalanced braces too)."""
        try:
            parts = _template_parts(v)
        except ValueError:
            parts = None
        if parts is None or any(written and plain is None for _, plain, written in parts):
            raise ValueError("template may use only {subject}, {object} and {predicate}, plain (no format spec, "
                             "conversion, attribute or index; a literal brace is {{ or }})")
        return v

    @field_validator("subject_kinds", "object_kinds")
    @classmethod
    def _kinds(cls, v: list[str]) -> list[str]:
        for k in v:
            if k not in (LITERAL, ANY_KIND) and not KIND_RE.match(k):
                raise ValueError(f"kind {k!r} must be PascalCase, 'literal' or '*'")
        if not v:
            raise ValueError("at least one kind is required")
        return v

    @field_validator("symmetric")
    @classmethod
    def _symmetric_joins_alike(cls, v: bool, info: ValidationInfo) -> bool:
        """A symmetric predicate joins two entities of the same kinds both ways, and is multi-valued: one with a
        literal object, or with other subject and object kinds (Person -> Organization), cannot hold both ways."""
        subjects, objects = info.data.get("subject_kinds"), info.data.get("object_kinds")
        if v and subjects is not None and objects is not None and (LITERAL in objects or set(subjects) != set(objects)):
            raise ValueError("a predicate that holds both ways needs the same subject and object kinds, and no "
                             "literal object")
        if v and info.data.get("cardinality") == "single":
            # one value at a time at both ends (MARRIED_TO) would need each end's timeline as subject and as object
            # closed together; the temporal rules keep one timeline per subject (graphmem.temporal)
            raise ValueError("a predicate that holds both ways is multi-valued (cardinality \"multi\"); one value at "
                             "a time for both ends is not supported: model it one way, single-valued")
        return v

    @property
    def sensitive(self) -> bool:
        """True for a predicate of a sensitive class (`SENSITIVE_CLASSES`): its `sensitivity` names one."""
        return self.sensitivity != "none"

    @property
    def single_valued(self) -> bool:
        return self.cardinality == "single"

    def accepts_subject(self, kind: str) -> bool:
        return ANY_KIND in self.subject_kinds or kind in self.subject_kinds

    def accepts_object(self, kind: str | None) -> bool:
        """`kind` None means a literal value."""
        if kind is None:
            return LITERAL in self.object_kinds
        return ANY_KIND in self.object_kinds or kind in self.object_kinds

    def statement(self, subject: str, obj: str) -> str:
        """The readable sentence for a fact, from the predicate's template: its plain `TEMPLATE_FIELDS` filled in.
        Any other replacement field (of a template stored before they were refused: predicates are read as stored)
        stays as written, text; nothing of it runs. Raises ValueError for unbalanced braces."""
        values = {"subject": subject, "object": obj, "predicate": self.name.lower().replace("_", " ")}
        return "".join(literal + (values[plain] if plain else written)
                       for literal, plain, written in _template_parts(self.template))


class Ontology:
    """An immutable set of predicates plus fact-class TTLs, for one tenant."""

    def __init__(self, predicates: dict[str, Predicate], class_ttl_days: dict[str, int | None]):
        self.predicates = predicates
        self.class_ttl_days = class_ttl_days

    @classmethod
    def default(cls) -> "Ontology":
        """The shipped CRM ontology."""
        raw = json.loads((Path(__file__).parent / "data" / "ontology_crm.json").read_text())
        preds = {p["name"]: Predicate(**p) for p in raw["predicates"]}
        ttls = {k: v.get("ttl_days") for k, v in raw["fact_classes"].items()}
        return cls(preds, ttls)

    def extended(self, extra: list[Predicate]) -> "Ontology":
        """A copy with the tenant's own predicates added (a tenant predicate overrides a default one)."""
        preds = dict(self.predicates)
        preds.update({p.name: p for p in extra})
        return Ontology(preds, self.class_ttl_days)

    def with_class_ttls(self, overrides: dict[str, int | None]) -> "Ontology":
        """A copy whose fact-class TTLs (days; None = keep) are overridden by a tenant's retention settings."""
        return Ontology(self.predicates, {**self.class_ttl_days, **overrides})

    def get(self, name: str, field: str = "predicate") -> Predicate:
        """The predicate called `name`; raises `InvalidInput` naming `field` when it is not in the ontology."""
        try:
            return self.predicates[name]
        except KeyError:
            raise InvalidInput(f"{field}: unknown predicate {name!r}; known: {', '.join(sorted(self.predicates))}",
                               field=field) from None

    def ttl(self, predicate: Predicate) -> timedelta | None:
        """The retention TTL of facts with this predicate (predicate override, else its class default)."""
        days = predicate.ttl_days or self.class_ttl_days.get(predicate.fact_class)
        return timedelta(days=days) if days else None
