"""Declarative mappings for JSON episodes (kind "json", or "event" holding a JSON object or list:
`graphmem.ingest.policy.is_text`): record changes in, facts out, no LLM.

A mapping (e.g. the default `graphmem/data/crm_mapping.json`) names, per record type (`type_field`, e.g.
"object": "contact"), the record's own entity and the facts it implies. Every string is a template over the
record's fields (`"{amount} {currency}"`); an entity or fact whose template fields are missing, null or empty is
left out, so a partial update only touches what it carries. An entity template needs a kind and a name (or an id
template); `external_ids` whose fields are missing are dropped. A record without its own name's fields names its
entity by its identifiers alone (`external_ids`, `email`, `domain`): a partial update such as
`{"object": "contact", "id": "c-7", "title": "CFO"}` updates the contact stored as `crm:contact:c-7` (and one with
another `email` replaces the contact's email, `graphmem.store.entities.resolve`; unless another entity holds it:
that email alone is refused, `email_taken`); when no
stored entity has those identifiers the job fails (`NotFound`: a new entity needs its name), and nothing of the
record is written. A related record named by its identifiers alone (a deal's `owner_id` without `owner`, a
contact's `account_id` without `company`) is the entity stored under them (or the entity of a record of the same
episode); when there is none, that fact alone is refused (`unknown_entity`, `graphmem.ingest.apply`) and the record's
other facts are stored. A fact has a `predicate`, optionally a `subject` (default: the record's entity, "self"), and either an `object` (an entity template or "self") or a `value`
template. A `value` template over several fields (a deal's `"{amount} {currency}"`) that a record gives only some
of (`{"object": "deal", "id": "d-1", "amount": "150000"}`) is a partial change of that value: the mapping yields the
fact with a placeholder value and a `Partial` (in `Mapped.partials`, by the fact's index); the worker completes it
from the value the subject holds at the record's time (`complete_value`: the stored value read back through the
template gives the missing fields), so "120000 EUR" becomes "150000 EUR". When that is impossible (no value valid
then, one that does not read as the template or reads two ways, or a later change of the value already stored, whose
missing fields may have come from the value this change replaces) the fact alone is refused (`incomplete_value`,
`graphmem.ingest.apply`) and the record's other facts are stored. Facts are `source = "system"`, confidence 1.0, valid from the record's `valid_from_field` (an ISO 8601
time with offset, or a date = midnight UTC; naive times are refused) or else the episode's `occurred_at`. Temporal rules (supersession, out-of-order history) are the
core's: a changed title closes the old one.

A field that is present with the value JSON `null` is a retraction: "the CRM cleared it". A fact's
`retract_on_null` lists the fields whose null clears it (default: the fields of its `value` template, else of its
object's name template, else of its subject's name template). The mapping then yields a `Retraction` of that
(subject, predicate), as of the record's valid-from time; the worker closes the fact valid then (status
"retracted", the episode as provenance with role "retraction"; nothing is deleted). When the fact's subject is the
nulled field (e.g. a deal's `owner`), the retraction names the object instead and closes the facts of that predicate
pointing at the record's entity. The clear is recorded on the entity whether or not anything was valid to close
(`graphmem.store.facts.record_clear`), so a value older than it that arrives later ends at it too. A field absent
from the record changes nothing, and an empty string is not a null.

A fact with `"exclusive": true` (its object must be "self" and its subject an entity template, e.g. the deal's
`OWNS_DEAL`) says the record's entity has ONE such subject at a time, even though the predicate is multi-valued in
the ontology (a person owns many deals; a deal has one owner). Besides the fact, the mapping then yields a
displacing `Retraction` (`exclusive`, `position` = the fact's index, `object` = the record's entity): with the fact,
the worker closes, through the same retraction path as a null, the other subjects' facts of that predicate on the
entity valid at the record's time (status "retracted" at that time, the episode as provenance); and when the change
arrives out of order (another subject's fact starts later, or the one it displaces ended later), the new subject's
fact is closed where that later change begins, so the newer owner stays current. Replays change nothing.
"""
from __future__ import annotations

import dataclasses
import json
import re
import string
from dataclasses import dataclass, field
from datetime import datetime
from decimal import Decimal
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError, model_validator

from graphmem import strict_json
from graphmem.errors import InvalidInput
from graphmem.identifiers import blank
from graphmem.models import EntityRef, Episode, FactIn
from graphmem.timeutil import to_utc

DEFAULT_MAPPING = Path(__file__).resolve().parents[1] / "data" / "crm_mapping.json"
_FMT = string.Formatter()


class MappingError(Exception):
    """The episode cannot be mapped (not JSON, unknown record type, bad time). A permanent job failure."""


class Mapping(BaseModel):
    """A loaded declarative mapping."""

    name: str
    version: int
    type_field: str = "object"
    valid_from_field: str | None = "changed_at"
    objects: dict[str, dict[str, Any]]
    description: str | None = None

    @model_validator(mode="after")
    def _exclusive_facts(self) -> "Mapping":
        for rtype, spec in self.objects.items():
            for i, fs in enumerate(spec.get("facts", [])):
                if fs.get("exclusive") and not (fs.get("object") == "self" and isinstance(fs.get("subject"), dict)):
                    raise ValueError(f"objects.{rtype}.facts[{i}] ({fs.get('predicate')}): \"exclusive\" needs "
                                     "\"object\": \"self\" and an entity template as \"subject\"")
        return self

    @classmethod
    def load(cls, path: Path | str | None = None) -> "Mapping":
        """Load a mapping file (default: the shipped CRM mapping)."""
        return _load(str(path or DEFAULT_MAPPING))


@lru_cache(maxsize=8)
def _load(path: str) -> Mapping:
    return Mapping(**json.loads(Path(path).read_text()))


@dataclass(frozen=True)
class Retraction:
    """A fact the record change clears (a mapped field set to null).

    Close the `predicate` facts of `subject` valid at `at` (aware UTC); or, when `subject` is None, the `predicate`
    facts whose object is `object` (whatever their subject). `field` is the record field that was null; `position`
    is how many of the episode's mapped facts precede it (record order), so a later record's value is asserted after
    an earlier record's null and vice versa. `episode_id` is the provenance.

    A displacement (an "exclusive" fact's new subject, not a null) has `exclusive` True and `position` = the index
    among the episode's mapped facts of the fact it goes with. That fact's subject keeps the object; the other
    subjects' `predicate` facts on the object valid at `at` are closed (see the module docstring); `field` is the
    record field naming the new subject.
    """

    predicate: str
    at: datetime
    episode_id: str
    field: str
    subject: EntityRef | None = None
    object: EntityRef | None = None
    position: int = 0
    exclusive: bool = False


@dataclass(frozen=True)
class Partial:
    """A fact whose `value` template the record gives only some fields of (a partial change of a combined value).

    `template` is the fact's value template, `given` the fields the record gives (rendered, non-blank), `missing`
    the template's other fields, to be taken from the value stored for the subject at the fact's `valid_from`
    (`complete_value`); `cleared`: the missing fields the record sets to null (which do not retract the fact, see
    `retract_on_null`: the value cannot be completed, so the fact is refused). The fact itself carries a placeholder
    value until then."""

    template: str
    given: dict[str, str]
    missing: tuple[str, ...]
    cleared: tuple[str, ...] = ()


@dataclass
class Mapped:
    """What a JSON episode maps to: the records' own entities (to create or enrich), the facts to assert and the
    retractions to apply, each in record order; `partials`: the facts (by index in `facts`) whose value the record
    gives only part of, to complete from the stored value before they are asserted."""

    entities: list[EntityRef] = field(default_factory=list)
    facts: list[FactIn] = field(default_factory=list)
    retractions: list[Retraction] = field(default_factory=list)
    partials: dict[int, Partial] = field(default_factory=dict)


def _fields(template: str | None) -> list[str]:
    return [f for _, f, _, _ in _FMT.parse(template or "") if f]


def _null_fields(fs: dict[str, Any]) -> list[str]:
    """The record fields whose null value retracts the fact described by spec `fs`."""
    if "retract_on_null" in fs:
        return list(fs["retract_on_null"])
    if "value" in fs:
        return _fields(fs["value"])
    if isinstance(fs.get("object"), dict):
        return _fields(fs["object"].get("name"))
    if isinstance(fs.get("subject"), dict):
        return _fields(fs["subject"].get("name"))
    return []


def _field(record: dict[str, Any], name: str) -> str | int | None:
    """The record's value of a mapped field: a string or a number; None when it is absent, null or blank ("", "   "
    or only invisible characters). A JSON float is given as the plain decimal it reads as (`plain_number`:
    1500000.0 -> "1500000", 1e-07 -> "0.0000001"), never Python's float repr. Raises `MappingError` for a JSON
    object, array or boolean, which no template renders as a value (Python would write "{'a': 1}", "['1', '2']" or
    "True" into the fact)."""
    v = record.get(name)
    if v is None or (isinstance(v, str) and blank(v)):
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        kind = "boolean" if isinstance(v, bool) else "array" if isinstance(v, list) else "object"
        raise MappingError(f"record field {name!r} holds a JSON {kind}; a mapped field takes a string or a number")
    return plain_number(v) if isinstance(v, float) else v


def plain_number(v: float) -> str:
    """A finite float as a plain decimal: an integral one as an integer ("1500000", "250000000000000000000"), any
    other as its shortest round-trip digits without exponent ("0.15", "0.0000001"). Raises `ValueError` for NaN or
    infinity (`strict_json` refuses them before a record gets here)."""
    d = Decimal(repr(v))
    if not d.is_finite():
        raise ValueError(f"not a finite number: {v!r}")
    if d == 0:
        return "0"   # -0.0 too
    return format(d.to_integral_value() if d == d.to_integral_value() else d, "f")


def _render(template: str, record: dict[str, Any]) -> str | None:
    """`template` filled in from `record`'s fields (`_field`); None when one is missing or the result is blank."""
    fields = [f for _, f, _, _ in _FMT.parse(template) if f is not None]
    vals = {}
    for f in fields:
        v = _field(record, f)
        if v is None:
            return None
        vals[f] = v
    out = template.format(**vals).strip()
    return None if blank(out) else out


def _partial(template: str, record: dict[str, Any]) -> Partial | None:
    """The `Partial` of a value `template` that `record` gives some but not all fields of, or sets some of to null;
    None when it gives none and nulls none (the record does not touch the value) or gives them all."""
    fields = list(dict.fromkeys(_fields(template)))
    given = {}
    for f in fields:
        v = _field(record, f)
        if v is not None:
            given[f] = str(v).strip()
    missing = tuple(f for f in fields if f not in given)
    cleared = tuple(f for f in missing if f in record and record[f] is None)
    if not (given or cleared) or not missing:
        return None
    return Partial(template, given, missing, cleared)


def _pattern(template: str, greedy: bool) -> tuple[re.Pattern, list[str]]:
    parts, names = [], []
    for literal, fname, _, _ in _FMT.parse(template):
        parts.append(re.escape(literal))
        if fname:
            parts.append("(.+)" if greedy else "(.+?)")
            names.append(fname)
    return re.compile("".join(parts), re.S), names


def read_value(template: str, value: str) -> dict[str, str] | None:
    """The fields of `template` that the stored `value` was rendered from ("120000 EUR" read through
    "{amount} {currency}" is amount "120000", currency "EUR"); None when the value does not have the template's
    shape, reads two ways ("1 000 EUR": amount "1" or "1 000"), or gives one field two values."""
    out = []
    for greedy in (False, True):
        pattern, names = _pattern(template, greedy)
        m = pattern.fullmatch(value.strip())
        if m is None:
            return None
        got: dict[str, str] = {}
        for n, v in zip(names, m.groups()):
            if got.setdefault(n, v.strip()) != v.strip() or blank(v):
                return None
        out.append(got)
    return out[0] if out[0] == out[1] else None


def complete_value(partial: Partial, stored: str) -> str | None:
    """`partial`'s value with its missing fields read from `stored` (the value its subject holds at the change);
    None when `stored` cannot be read through the template (`read_value`)."""
    got = read_value(partial.template, stored)
    if got is None:
        return None
    return _render(partial.template, {**got, **partial.given})


def placeholder(partial: Partial) -> str:
    """The value a partial fact carries until it is completed: the template with the given fields filled in and the
    missing ones as written ("150000 {currency}")."""
    return _FMT.vformat(partial.template, (), {**{f: "{" + f + "}" for f in partial.missing}, **partial.given})


def _entity(spec: dict[str, Any], record: dict[str, Any], *, nameless: bool = False) -> EntityRef | None:
    """The entity `spec` renders from `record`, None when its name's fields are missing. With `nameless`, a
    record without them still names the entity by its strong identifiers when it has any: a partial update
    ("contact crm:contact:7 changed title") then resolves to the entity stored before, and so does a related
    record named by id alone (`owner_id`)."""
    name = _render(spec.get("name", ""), record) if spec.get("name") else None
    ext = [x for t in spec.get("external_ids", []) if (x := _render(t, record))]
    ids = {k: _render(spec[k], record) if spec.get(k) else None for k in ("email", "domain")}
    if name is None and not (nameless and (ext or any(ids.values()))):
        return None
    try:
        return EntityRef(kind=spec["kind"], name=name, external_ids=ext, **ids)
    except ValidationError:
        # a malformed email or domain in the record: keep the entity, drop the bad identifier
        if name is None and not ext:
            return None
        return EntityRef(kind=spec["kind"], name=name, external_ids=ext)


def map_record(mapping: Mapping, record: dict[str, Any], episode: Episode
               ) -> tuple[EntityRef, list[FactIn], list[Retraction], dict[int, Partial]]:
    """The record's own entity (to create or enrich even when no fact changes), the facts the record change
    implies, the retractions its null fields and exclusive facts imply (either possibly empty; retractions have
    `position` 0, except a displacement's, which is the index of its fact in the returned facts) and the partial
    values among the facts (by index in the returned facts). Raises `MappingError`."""
    rtype = record.get(mapping.type_field)
    spec = mapping.objects.get(rtype) if isinstance(rtype, str) else None
    if spec is None:
        raise MappingError(f"record {mapping.type_field}={rtype!r} is not in mapping {mapping.name!r} "
                           f"(known: {', '.join(sorted(mapping.objects))})")
    valid_from = episode.occurred_at
    if mapping.valid_from_field and record.get(mapping.valid_from_field):
        raw = record[mapping.valid_from_field]
        if isinstance(raw, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw.strip()):
            raw = raw.strip() + "T00:00:00+00:00"    # a calendar date: midnight UTC
        try:
            valid_from = to_utc(raw, mapping.valid_from_field)
        except InvalidInput as exc:
            raise MappingError(exc.detail) from exc
    me = _entity(spec["entity"], record, nameless=True)
    if me is None:
        ids = [t for k in ("email", "domain") if (t := spec["entity"].get(k))] + spec["entity"].get("external_ids", [])
        raise MappingError(f"{rtype} record has neither {spec['entity'].get('name')} (its name) nor an identifier "
                           f"({', '.join(ids) or 'none in the mapping'})")
    out: list[FactIn] = []
    gone: list[Retraction] = []
    partials: dict[int, Partial] = {}
    for fs in spec.get("facts", []):
        nulled = [f for f in _null_fields(fs) if f in record and record[f] is None]
        if nulled:
            subject_spec = fs.get("subject", "self")
            if subject_spec == "self":
                gone.append(Retraction(fs["predicate"].strip().upper(), valid_from, episode.id, nulled[0], subject=me))
            elif fs.get("object") == "self":      # the nulled field named the subject: close what points at us
                gone.append(Retraction(fs["predicate"].strip().upper(), valid_from, episode.id, nulled[0], object=me))
            else:
                raise MappingError(f"mapping {mapping.name!r}: fact {fs['predicate']} has neither subject nor object "
                                   "'self', so a null field cannot say which fact to retract")
            continue
        subject = me if fs.get("subject", "self") == "self" else _entity(fs["subject"], record, nameless=True)
        obj = value = partial = None
        if "object" in fs:
            obj = me if fs["object"] == "self" else _entity(fs["object"], record, nameless=True)
            if obj is None:
                continue
        else:
            value = _render(fs["value"], record)
            partial = _partial(fs["value"], record) if value is None else None
            if partial is not None:
                value = placeholder(partial)
            elif value is None:
                continue
        if subject is None:
            continue
        if partial is not None:
            partials[len(out)] = partial
        out.append(FactIn(subject=subject, predicate=fs["predicate"], object=obj, value=value, valid_from=valid_from,
                          source="system", confidence=1.0, episode_id=episode.id))
        if fs.get("exclusive"):
            gone.append(Retraction(fs["predicate"].strip().upper(), valid_from, episode.id,
                                   next(iter(_null_fields(fs)), fs["predicate"]), object=me, exclusive=True,
                                   position=len(out) - 1))
    return me, out, gone, partials


def extract(mapping: Mapping, episode: Episode) -> Mapped:
    """Entities, facts and retractions from a JSON episode: one record object, or a list of them, in record order
    (each `Retraction.position` counts the facts of earlier records and of its own; a displacement's is the index
    of its fact in `facts`, as is each key of `partials`).
    Raises `MappingError`."""
    try:
        data = strict_json.loads(episode.content)
    except json.JSONDecodeError as exc:
        raise MappingError(f"episode content is not JSON: {exc.msg} at character {exc.pos}") from exc
    records = data if isinstance(data, list) else [data]
    out = Mapped()
    for r in records:
        if not isinstance(r, dict):
            raise MappingError("each record must be a JSON object")
        me, facts, gone, partials = map_record(mapping, r, episode)
        out.entities.append(me)
        before = len(out.facts)
        out.partials.update({before + k: p for k, p in partials.items()})
        out.facts += facts
        out.retractions += [dataclasses.replace(g, position=before + g.position if g.exclusive else len(out.facts))
                            for g in gone]
    return out
