"""Pins: typed session state that no extractor, summarizer or compactor may rewrite (DESIGN.md principle 2).

A pin is `(tenant_id, session_id, key)` -> a typed value. Types: `order_id`, `amount` (a `Decimal`, never a float;
sent as a string of ASCII digits with an optional point and exponent, stored in positional notation: "2.5e3" is
"2500"), `currency` (an ISO 4217 alphabetic code, checked against pycountry's ISO 4217 table),
`approval_id`, `idempotency_key`, `goal` (text + constraints), `constraint`, `human_gate` (a human decision and
its outcome), `obligation` ("the user asked to cancel"), and `custom` (a tenant-defined key with a declared value
type: string, decimal, integer, boolean or datetime).

Storage (`:Pin` node): `value_type` (the pin type), `value` (the primary value as a string), `attrs` (the other
typed fields as canonical JSON), `status` (`active`, or `candidate` when compaction proposed it), `version`
(optimistic concurrency: every write names the version it read; a stale one raises `Conflict`), `set_by`
(episode id), `written_by` (`agent` or `compactor`), `created_at`, `updated_at` (UTC).

The only write paths are `PinStore.put` / `delete` (callers with the expected version) and
`PinStore.add_candidates` (compaction: creates keys that do not exist, never touches an existing pin).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Annotated, Any, Literal, Union

import neo4j
import pycountry
from pydantic import (BaseModel, BeforeValidator, Field, TypeAdapter, ValidationError, field_serializer,
                      field_validator, model_validator)

from graphmem.errors import Conflict, InvalidInput, NotFound
from graphmem.models import Input, UtcDatetime, error_message, new_id, visible
from graphmem.store import Database, live, require_tenant
from graphmem.store.db import Tx
from graphmem.store.episodes import lock_retained_episodes
from graphmem.timeutil import to_utc, utcnow

KEY_RE = re.compile(r"^[a-z][a-z0-9_.-]{0,63}$")
ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:/#-]{0,127}$")
PinType = Literal["order_id", "amount", "currency", "approval_id", "idempotency_key", "goal", "constraint",
                  "human_gate", "obligation", "custom"]
ValueType = Literal["string", "decimal", "integer", "boolean", "datetime"]
MAX_TEXT = 2000


def _no_float(v: Any) -> Any:
    """Decimals arrive as strings (or integers): a JSON/Python float has already lost exactness."""
    if isinstance(v, float):
        raise ValueError('send amounts as strings such as "129.99": a float is not exact')
    return v


_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", re.ASCII)


def _decimal(v: Any) -> Decimal:
    v = _no_float(v)
    if not _DECIMAL.fullmatch(str(v).strip()):   # Decimal() also takes "1_000", "١٢٣" and "NaN"
        raise ValueError(f"not a decimal number (ASCII digits, an optional point and exponent): {v!r}")
    try:
        d = Decimal(str(v).strip())
    except InvalidOperation as exc:
        raise ValueError(f"not a decimal number: {v!r}") from exc
    if not d.is_finite():
        raise ValueError("amount must be finite")
    digits, exponent = len(d.as_tuple().digits), d.as_tuple().exponent
    if -exponent > 12 or digits + max(exponent, 0) > 38:   # as written out: "1e13" is 14 digits, none after the point
        raise ValueError("amount has too many digits (at most 38, 12 after the point)")
    return d


ExactDecimal = Annotated[Decimal, BeforeValidator(_decimal)]


def _identifier(v: str) -> str:
    v = v.strip()
    if not ID_RE.match(v):
        raise ValueError("an id is 1-128 characters: letters, digits and _ . : / # - (starting with a letter or digit)")
    return v


def _text(v: str) -> str:
    """`v` stripped, at most `MAX_TEXT` characters; blank text (`graphmem.identifiers.blank`) is refused with the
    `VISIBLE` pattern's own error (`visible`: "must not be blank ...", as every other field words it)."""
    v = visible(v.strip())
    if len(v) > MAX_TEXT:
        raise ValueError(f"at most {MAX_TEXT} characters")
    return v


Identifier = Annotated[str, BeforeValidator(lambda v: _identifier(v) if isinstance(v, str) else v)]
Text = Annotated[str, BeforeValidator(lambda v: _text(v) if isinstance(v, str) else v)]


class _Value(Input):
    """Base of the typed pin values: a caller's input (`Input`: unknown fields and lone surrogates refused)."""

    def primary(self) -> str:
        """The primary value as stored in `Pin.value` (a string)."""
        return str(getattr(self, "value"))

    def attrs(self) -> dict[str, Any]:
        """The other typed fields (stored as canonical JSON in `Pin.attrs`)."""
        return self.model_dump(mode="json", exclude={"type", "value"}, exclude_none=True)

    def render(self) -> str:
        """One deterministic line for the context window."""
        extra = self.attrs()
        tail = "".join(f"; {k}: {json.dumps(v, sort_keys=True, ensure_ascii=False)}" for k, v in sorted(extra.items()))
        return f"{self.primary()}{tail}"


class OrderIdValue(_Value):
    """An order id, exactly as the order system spells it."""
    type: Literal["order_id"] = "order_id"
    value: Identifier = Field(examples=["A-10293"])


class AmountValue(_Value):
    """A money amount: a Decimal (never a float), serialised as a plain decimal string ("129.99"; "2.5e3" is
    stored as "2500", "0.0000005" as itself, never in exponent form)."""
    type: Literal["amount"] = "amount"
    value: ExactDecimal = Field(examples=["129.99"])

    def primary(self) -> str:
        """The amount in positional notation (`str(Decimal)` would give "5E-7")."""
        return format(self.value, "f")

    @field_serializer("value")
    def _positional(self, v: Decimal) -> str:
        return format(v, "f")   # in every JSON answer too (pins, the window's pin list, exports)


class CurrencyValue(_Value):
    """An ISO 4217 alphabetic currency code (EUR, USD, JPY ...)."""
    type: Literal["currency"] = "currency"
    value: str = Field(examples=["EUR"])

    @field_validator("value")
    @classmethod
    def _iso4217(cls, v: str) -> str:
        code = v.strip().upper()
        if not re.fullmatch(r"[A-Z]{3}", code) or pycountry.currencies.get(alpha_3=code) is None:
            raise ValueError(f"{v!r} is not an ISO 4217 currency code")
        return code


class ApprovalIdValue(_Value):
    """The id of an authorization or approval decision."""
    type: Literal["approval_id"] = "approval_id"
    value: Identifier = Field(examples=["APR-7781"])


class IdempotencyKeyValue(_Value):
    """An idempotency key the next tool call must reuse."""
    type: Literal["idempotency_key"] = "idempotency_key"
    value: Identifier = Field(examples=["refund-A-10293-1"])


class GoalValue(_Value):
    """The user's goal and its constraints."""
    type: Literal["goal"] = "goal"
    value: Text = Field(examples=["Refund order A-10293"])
    constraints: list[Text] = Field(default_factory=list, max_length=50, examples=[["refund to the original card"]])


class ConstraintValue(_Value):
    """One constraint on the work ("no refunds above 500 EUR without a manager")."""
    type: Literal["constraint"] = "constraint"
    value: Text


class HumanGateValue(_Value):
    """A human-in-the-loop gate and its outcome."""
    type: Literal["human_gate"] = "human_gate"
    value: Literal["approved", "rejected", "escalated", "pending"] = Field(examples=["approved"])
    gate: Text = Field(examples=["refund over 100 EUR"])
    decided_by: str | None = Field(default=None, max_length=200)
    approval_id: Identifier | None = None


class ObligationValue(_Value):
    """An open (or closed) obligation: "the user asked to cancel"."""
    type: Literal["obligation"] = "obligation"
    value: Text = Field(examples=["the user asked to cancel the subscription"])
    status: Literal["open", "done", "cancelled"] = "open"


class CustomValue(_Value):
    """A tenant-defined key with a declared value type; `value` is its canonical string form."""
    type: Literal["custom"] = "custom"
    value_type: ValueType = Field(examples=["decimal"])
    value: str = Field(max_length=MAX_TEXT, examples=["12.5"])

    @field_validator("value", mode="before")
    @classmethod
    def _scalar(cls, v: Any) -> Any:
        v = _no_float(v)
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if isinstance(v, int) else v

    @model_validator(mode="after")
    def _typed(self) -> "CustomValue":
        self.value = canonical_custom(self.value_type, self.value)
        return self


def canonical_custom(value_type: str, raw: str) -> str:
    """The canonical string of a custom pin value; `ValueError` when it is not of `value_type` (blank text: the
    `VISIBLE` pattern's own error, a `PydanticCustomError`)."""
    raw = str(raw).strip()
    if value_type == "string":
        return visible(raw)   # blank: the `VISIBLE` pattern's own error, "must not be blank ..."
    if value_type == "decimal":
        return format(_decimal(raw), "f")
    if value_type == "integer":
        if not re.fullmatch(r"[+-]?\d{1,30}", raw):
            raise ValueError(f"{raw!r} is not an integer")
        return str(int(raw))
    if value_type == "boolean":
        if raw.lower() not in ("true", "false"):
            raise ValueError("a boolean is 'true' or 'false'")
        return raw.lower()
    if value_type == "datetime":
        try:
            return to_utc(raw, "value").isoformat()
        except InvalidInput as exc:
            raise ValueError(exc.detail) from exc
    raise ValueError(f"unknown value_type {value_type!r}")


PinValue = Annotated[Union[OrderIdValue, AmountValue, CurrencyValue, ApprovalIdValue, IdempotencyKeyValue, GoalValue,
                           ConstraintValue, HumanGateValue, ObligationValue, CustomValue], Field(discriminator="type")]
"""A typed pin value; `type` selects the model."""
_VALUE = TypeAdapter(PinValue)


class Pin(BaseModel):
    """A stored pin. `status` is `candidate` when compaction proposed it (unconfirmed; a write confirms it)."""

    session_id: str
    key: str
    value: PinValue
    status: Literal["active", "candidate"] = "active"
    version: int
    set_by: str | None = Field(default=None, description="id of the episode that set it")
    written_by: Literal["agent", "compactor"] = "agent"
    created_at: UtcDatetime
    updated_at: UtcDatetime

    def render(self) -> str:
        """`key (type): value` - deterministic, for the window."""
        return f"{self.key} ({self.value.type}): {self.value.render()}"


class PinKeyDef(BaseModel):
    """A tenant-defined pin key: pins under `key` must be of `type` (and, for custom, of `value_type`)."""

    key: str = Field(examples=["loyalty_tier"])
    type: PinType = Field(examples=["custom"])
    value_type: ValueType | None = Field(default=None, examples=["string"])
    description: str | None = Field(default=None, max_length=500)


def check_key(key: str, field: str = "key") -> str:
    """`key` if it is a valid pin key (lower snake case, 1-64 characters); else `InvalidInput`."""
    if not isinstance(key, str) or not KEY_RE.match(key):
        raise InvalidInput("a pin key is 1-64 characters: a lower-case letter, then a-z 0-9 _ . -", field=field)
    return key


def parse_value(raw: Any, field: str = "value") -> PinValue:
    """Validate a pin value from a dict; `InvalidInput` naming the field at fault."""
    try:
        return _VALUE.validate_python(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err.get("loc", ()) if not str(p).endswith("Value") and p not in (
            "order_id", "amount", "currency", "approval_id", "idempotency_key", "goal", "constraint", "human_gate",
            "obligation", "custom"))
        raise InvalidInput(f"{field}{'.' + loc if loc else ''}: {error_message(err)}",
                           field=f"{field}.{loc}" if loc else field) from exc


STORED = ("session_id", "key", "value_type", "value", "version", "created_at", "updated_at")
"""The properties every stored pin has and `from_row` reads: a pin map without one of them is a pin deleted while
it was read (`graphmem.store.live`)."""


def from_row(row: dict[str, Any]) -> Pin:
    raw = {"type": row["value_type"], "value": row["value"], **json.loads(row.get("attrs") or "{}")}
    return Pin(session_id=row["session_id"], key=row["key"], value=_VALUE.validate_python(raw),
               status=row.get("status") or "active", version=row["version"], set_by=row.get("set_by"),
               written_by=row.get("written_by") or "agent", created_at=row["created_at"], updated_at=row["updated_at"])


def _value_key(value_type: str, primary: str) -> tuple[str, str]:
    """(type, primary value) as compared for sameness: an amount by its number ("1299.00" is "1299"), an order or
    approval id by its letters and digits, case-blind ("a-10293" and "A10293" are order A-10293)."""
    if value_type in ("order_id", "approval_id"):
        return value_type, re.sub(r"[\W_]+", "", primary).casefold()
    if value_type == "amount":
        try:
            return value_type, format(Decimal(primary).normalize(), "f")
        except ArithmeticError:
            pass
    return value_type, primary


def value_keys(value: PinValue) -> set[tuple[str, str]]:
    """What a pin value holds, as `_value_key`s: its own, and a human gate's approval id (it is that approval)."""
    keys = {_value_key(value.type, value.primary())}
    if isinstance(value, HumanGateValue) and value.approval_id:
        keys.add(_value_key("approval_id", value.approval_id))
    return keys


def _props(value: PinValue) -> dict[str, Any]:
    return {"value_type": value.type, "value": value.primary(),
            "attrs": json.dumps(value.attrs(), sort_keys=True, separators=(",", ":"), ensure_ascii=False)}


class PinStore:
    """Pin reads and writes with optimistic concurrency. Every method raises `TenantRequired` without a tenant."""

    def __init__(self, db: Database, before_write: Callable[[str, str], object] | None = None):
        """`before_write(tenant_id, session_id)` runs before `put` and `delete` write (the context service's expiry
        of a session past the retention TTL, so the write does not revive it)."""
        self.db, self.before_write = db, before_write

    # ---- reads -------------------------------------------------------------------------------
    def list(self, tenant_id: str, session_id: str, *, status: str | None = None, offset: int = 0,
             limit: int = 500) -> list[Pin]:
        """A session's pins by key. `status`: None (all), "active" or "candidate"."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: list_in(tx, tenant_id, session_id, status=status, offset=offset, limit=limit))

    def get(self, tenant_id: str, session_id: str, key: str) -> Pin:
        """One pin; `NotFound` (field `key`) when the session has none under `key`."""
        require_tenant(tenant_id)
        row = self.db.one("pins/get", tenant_id=tenant_id, session_id=session_id, key=check_key(key),
                          now=utcnow())
        if row is None or live(row["pin"], *STORED) is None:
            raise NotFound(f"session {session_id!r} has no pin {key!r}", field="key")
        return from_row(row["pin"])

    # ---- writes ------------------------------------------------------------------------------
    def put(self, tenant_id: str, session_id: str, key: str, value: PinValue, expected_version: int | None, *,
            set_by: str | None = None) -> tuple[Pin, bool]:
        """Create or replace a pin. Returns (pin, created).

        `expected_version`: None or 0 creates (Conflict if the key exists); N replaces version N (Conflict if the
        stored version differs; a candidate is confirmed by writing its version; a candidate whose source turn is
        past retention counts as absent, `drop_stale_candidates`). Raises `NotFound` (no session),
        `InvalidInput` (bad key, or a value that breaks the tenant's key definition), `Conflict` (stale write).
        """
        require_tenant(tenant_id)
        check_key(key)
        if self.before_write is not None:
            self.before_write(tenant_id, session_id)
        return self.db.write(lambda tx: put_in(tx, tenant_id, session_id, key, value, expected_version, set_by))

    def delete(self, tenant_id: str, session_id: str, key: str, expected_version: int) -> None:
        """Delete a pin at `expected_version`. `NotFound` if absent; `Conflict` if the version is stale."""
        require_tenant(tenant_id)
        check_key(key)
        if self.before_write is not None:
            self.before_write(tenant_id, session_id)
        self.db.write(lambda tx: delete_in(tx, tenant_id, session_id, key, expected_version))

    def held_values(self, tenant_id: str, session_id: str) -> set[tuple[str, str]]:
        """The `value_keys` compaction must not propose: those of every pin of the session, and of every value
        deleted from it (`cypher/pins/delete`)."""
        require_tenant(tenant_id)
        held = set()
        for p in self.list(tenant_id, session_id, limit=10_000):
            held |= value_keys(p.value)
        row = self.db.one("pins/dismissed", tenant_id=tenant_id, session_id=session_id)
        held.update(_value_key(*d.split(":", 1)) for d in (row["dismissed"] if row else []))
        return held

    def add_candidates(self, tenant_id: str, session_id: str, candidates: list[tuple[str, PinValue, str | None]]
                       ) -> list[str]:
        """Compaction's only pin write: (key, value, episode id) candidates for keys not yet pinned and not defined
        by the tenant as another type (such a candidate could never be confirmed). Existing pins are never changed.
        Returns the keys created. A candidate already there whose own turn is past retention (hidden by every read)
        is replaced (`drop_stale_candidates`). A candidate whose episode is gone (erased since compaction read it) or past
        retention (its own or its session's, as every read treats it) is not written: the episodes are locked first
        (`graphmem.store.episodes.lock_retained_episodes`), so an erasure or expiry either commits before (and the
        candidate is dropped) or waits and then deletes the candidate with the episode (a candidate goes with the
        turn it came from, docs/governance.md)."""
        require_tenant(tenant_id)

        def work(tx: Tx) -> list[str]:
            cited = {ep for _, _, ep in candidates if ep is not None}
            alive = set(lock_retained_episodes(tx, tenant_id, cited, utcnow())) if cited else set()
            rows = []
            for k, v, ep in candidates:
                if ep is not None and ep not in alive:
                    continue
                try:
                    check_definition(tx, tenant_id, check_key(k), v)
                except InvalidInput:
                    continue
                rows.append({"key": k, "set_by": ep, **_props(v)})
            if rows:   # a candidate from a turn past retention is no pin: the new proposal takes its key
                drop_stale_candidates(tx, tenant_id, session_id, sorted({r["key"] for r in rows}))
            return [r["key"] for r in tx.rows("pins/create_candidates", tenant_id=tenant_id, session_id=session_id,
                                              rows=rows, now=utcnow(), call_id=new_id())] if rows else []
        return self.db.write(work) if candidates else []

    # ---- tenant key definitions ------------------------------------------------------------
    def define_key(self, tenant_id: str, definition: PinKeyDef) -> PinKeyDef:
        """Define (or redefine) a tenant pin key (custom keys need a `value_type`). `Conflict` (field `type`) when
        pins under the key hold another type (or value type) in some session: the definition would not hold for
        them; delete or rewrite those pins first."""
        require_tenant(tenant_id)
        check_key(definition.key)
        if definition.type == "custom" and definition.value_type is None:
            raise InvalidInput("a custom pin key needs a value_type", field="value_type")
        if definition.type != "custom" and definition.value_type is not None:
            raise InvalidInput("value_type applies to custom pin keys only", field="value_type")
        params = dict(tenant_id=tenant_id, key=definition.key, type=definition.type, value_type=definition.value_type)

        def work(tx: Tx) -> PinKeyDef:
            tx.rows("pins/lock_key", tenant_id=tenant_id, key=definition.key)   # pin writes under it wait
            clash = tx.one("pins/key_conflicts", **params)
            if clash["pins"]:
                raise Conflict(f"{clash['pins']} pin(s) under {definition.key!r} hold another type (sessions "
                               f"{', '.join(map(repr, clash['sessions']))}{' ...' if clash['pins'] > 3 else ''}); "
                               "delete or rewrite them first", field="type")
            return PinKeyDef(**tx.one("pins/define_key", **params, description=definition.description,
                                      now=utcnow())["definition"])
        return self.db.write(work)

    def list_keys(self, tenant_id: str, offset: int = 0, limit: int = 100) -> list[PinKeyDef]:
        """The tenant's pin key definitions."""
        require_tenant(tenant_id)
        return [PinKeyDef(**r["definition"]) for r in self.db.rows("pins/list_keys", tenant_id=tenant_id,
                                                                  offset=offset, limit=limit)]


# ---- transaction-level helpers (used by the turn append, which writes pins in its own transaction) ----------
def list_in(tx: Tx, tenant_id: str, session_id: str, *, status: str | None = None, offset: int = 0,
            limit: int = 500) -> list[Pin]:
    """`PinStore.list` inside a transaction."""
    return [from_row(r["pin"]) for r in tx.rows("pins/list", tenant_id=tenant_id, session_id=session_id, now=utcnow(),
                                                  status=status, offset=offset, limit=limit) if live(r["pin"], *STORED)]


def drop_stale_candidates(tx: Tx, tenant_id: str, session_id: str, keys: list[str]) -> int:
    """Delete the session's pin candidates under `keys` whose source turn is past retention (its own or its
    session's), as the sweep will (`cypher/pins/drop_stale_candidates`): every read hides them already, so a write
    treats the key as free (the agent's write creates its pin, a re-proposal from a live turn replaces it). Returns
    how many went. Each is write-locked and checked again first."""
    return tx.one("pins/drop_stale_candidates", tenant_id=tenant_id, session_id=session_id, keys=keys,
                  now=utcnow())["dropped"]


def _locked(tx: Tx, tenant_id: str, session_id: str, key: str) -> Pin | None:
    """The pin under `key`, write-locked (None when there is none, or only a candidate whose turn is past retention:
    it is deleted first, `drop_stale_candidates`); `NotFound` (field `session_id`) without the session."""
    drop_stale_candidates(tx, tenant_id, session_id, [key])
    row = tx.one("pins/lock", tenant_id=tenant_id, session_id=session_id, key=key)
    if not row or not row["session_exists"]:
        raise NotFound(f"no session {session_id!r}", field="session_id")
    return from_row(row["pin"]) if row["pin"] else None


def check_definition(tx: Tx, tenant_id: str, key: str, value: PinValue, field: str = "value.type",
                     lock: bool = False) -> None:
    """Raise `InvalidInput` (naming `field`) when the tenant defined pin key `key` with another value type. With
    `lock` (a write) the definition's write lock is taken first, so a redefinition waits for the write or the write
    sees it (`cypher/pins/lock_key`)."""
    definition = tx.one("pins/lock_key" if lock else "pins/get_key", tenant_id=tenant_id, key=key)
    if definition:
        d = definition["definition"]
        if value.type != d["type"] or (value.type == "custom" and value.value_type != d.get("value_type")):
            want = d["type"] + (f" ({d['value_type']})" if d.get("value_type") else "")
            raise InvalidInput(f"pin key {key!r} is defined by the tenant as {want}", field=field)


def version_conflict(key: str, current: int | None, expected: int | None, field: str,
                     candidate: bool = False) -> Conflict:
    """The 409 of a pin write whose expected version (None or 0: a new pin) is not the pin's `current` one (None:
    no such pin), naming `field`. `candidate`: the pin is one compaction proposed, which the message says (an agent
    writing a new pin under a key compaction took first is told how to take it)."""
    if current is None:
        return Conflict(f"pin {key!r} does not exist (expected version {expected})", field=field)
    taken = (f"; it is a candidate compaction proposed: write expected_version {current} to confirm or replace it"
             if candidate else "")
    return Conflict(f"pin {key!r} is at version {current}; this write expected "
                    f"{expected or 'a new pin'}{taken}", field=field)


def put_in(tx: Tx, tenant_id: str, session_id: str, key: str, value: PinValue, expected_version: int | None,
           set_by: str | None, field: str = "version", prefix: str = "") -> tuple[Pin, bool]:
    """`PinStore.put` inside a transaction (see there). `field` names the version field in errors, `prefix` goes
    before the others (`pins[0].` in a turn)."""
    check_definition(tx, tenant_id, key, value, f"{prefix}value.type", lock=True)
    current = _locked(tx, tenant_id, session_id, key)
    now = utcnow()
    props = {**_props(value), "status": "active", "set_by": set_by, "written_by": "agent"}
    if current is None:
        if expected_version not in (None, 0):
            raise version_conflict(key, None, expected_version, field)
        try:
            row = tx.one("pins/create", tenant_id=tenant_id, session_id=session_id, key=key, props=props, now=now)
        except neo4j.exceptions.ConstraintError as exc:
            raise Conflict(f"pin {key!r} was created concurrently; read it and retry with its version",
                           field=field) from exc
        return from_row(row["pin"]), True
    if expected_version is None or expected_version != current.version:
        raise version_conflict(key, current.version, expected_version, field, current.status == "candidate")
    row = tx.one("pins/update", tenant_id=tenant_id, session_id=session_id, key=key, props=props, now=now)
    return from_row(row["pin"]), False


def delete_in(tx: Tx, tenant_id: str, session_id: str, key: str, expected_version: int | None,
              field: str = "version", prefix: str = "") -> None:
    """`PinStore.delete` inside a transaction (`field` and `prefix` as for `put_in`)."""
    current = _locked(tx, tenant_id, session_id, key)
    if current is None:
        raise NotFound(f"session {session_id!r} has no pin {key!r}", field=f"{prefix}key")
    if current.version != expected_version:
        raise Conflict(f"pin {key!r} is at version {current.version}, not {expected_version}", field=field)
    tx.run("pins/delete", tenant_id=tenant_id, session_id=session_id, key=key, now=utcnow(),
           dismissed=sorted(f"{t}:{v}" for t, v in value_keys(current.value)))


def pin_version_check(tx: Tx, tenant_id: str, session_id: str, key: str) -> tuple[int | None, bool]:
    """The current version of a pin (None when absent, `graphmem.store.live`) and whether it is a candidate
    compaction proposed, read without locking (pre-checks)."""
    row = tx.one("pins/get", tenant_id=tenant_id, session_id=session_id, key=key, now=utcnow())
    pin = live(row["pin"], *STORED) if row else None
    return (pin["version"], pin.get("status") == "candidate") if pin else (None, False)

