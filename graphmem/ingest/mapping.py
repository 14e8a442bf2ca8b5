"""Declarative mappings for JSON episodes (kind "json" or "event"): record changes in, facts out, no LLM.

A mapping (e.g. the default `graphmem/data/crm_mapping.json`) names, per record type (`type_field`, e.g.
"object": "contact"), the record's own entity and the facts it implies. Every string is a template over the
record's fields (`"{amount} {currency}"`); an entity or fact whose template fields are missing, null or empty is
left out, so a partial update only touches what it carries. An entity template needs a kind and a name (or an id
template); `external_ids` whose fields are missing are dropped. A fact has a `predicate`, optionally a `subject`
(default: the record's entity, "self"), and either an `object` (an entity template or "self") or a `value`
template. Facts are `source = "system"`, confidence 1.0, valid from the record's `valid_from_field` (an ISO 8601
time with offset, or a date = midnight UTC; naive times are refused) or else the episode's `occurred_at`. Temporal rules (supersession, out-of-order history) are the
core's: a changed title closes the old one.
"""
from __future__ import annotations

import json
import re
import string
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from graphmem.errors import InvalidInput
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

    @classmethod
    def load(cls, path: Path | str | None = None) -> "Mapping":
        """Load a mapping file (default: the shipped CRM mapping)."""
        return _load(str(path or DEFAULT_MAPPING))


@lru_cache(maxsize=8)
def _load(path: str) -> Mapping:
    return Mapping(**json.loads(Path(path).read_text()))


def _render(template: str, record: dict[str, Any]) -> str | None:
    fields = [f for _, f, _, _ in _FMT.parse(template) if f is not None]
    vals = {}
    for f in fields:
        v = record.get(f)
        if v is None or (isinstance(v, str) and not v.strip()):
            return None
        vals[f] = v
    out = template.format(**vals).strip()
    return out or None


def _entity(spec: dict[str, Any], record: dict[str, Any]) -> EntityRef | None:
    name = _render(spec.get("name", ""), record) if spec.get("name") else None
    if name is None:
        return None
    ext = [x for t in spec.get("external_ids", []) if (x := _render(t, record))]
    try:
        return EntityRef(kind=spec["kind"], name=name, external_ids=ext,
                         email=_render(spec["email"], record) if spec.get("email") else None,
                         domain=_render(spec["domain"], record) if spec.get("domain") else None)
    except ValidationError:
        # a malformed email or domain in the record: keep the entity, drop the bad identifier
        return EntityRef(kind=spec["kind"], name=name, external_ids=ext)


def map_record(mapping: Mapping, record: dict[str, Any], episode: Episode) -> tuple[EntityRef, list[FactIn]]:
    """The record's own entity (to create or enrich even when no fact changes) and the facts the record change
    implies (possibly none). Raises `MappingError`."""
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
    me = _entity(spec["entity"], record)
    if me is None:
        raise MappingError(f"{rtype} record has no {spec['entity'].get('name')} (its name)")
    out = []
    for fs in spec.get("facts", []):
        subject = me if fs.get("subject", "self") == "self" else _entity(fs["subject"], record)
        obj = value = None
        if "object" in fs:
            obj = me if fs["object"] == "self" else _entity(fs["object"], record)
            if obj is None:
                continue
        else:
            value = _render(fs["value"], record)
            if value is None:
                continue
        if subject is None:
            continue
        out.append(FactIn(subject=subject, predicate=fs["predicate"], object=obj, value=value, valid_from=valid_from,
                          source="system", confidence=1.0, episode_id=episode.id))
    return me, out


def extract(mapping: Mapping, episode: Episode) -> tuple[list[EntityRef], list[FactIn]]:
    """(record entities, facts) from a JSON episode: one record object, or a list of them. Raises `MappingError`."""
    try:
        data = json.loads(episode.content)
    except json.JSONDecodeError as exc:
        raise MappingError(f"episode content is not JSON: {exc.msg} at character {exc.pos}") from exc
    records = data if isinstance(data, list) else [data]
    entities: list[EntityRef] = []
    out: list[FactIn] = []
    for r in records:
        if not isinstance(r, dict):
            raise MappingError("each record must be a JSON object")
        me, facts = map_record(mapping, r, episode)
        entities.append(me)
        out += facts
    return entities, out
