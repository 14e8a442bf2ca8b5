"""UTC time helpers. graphmem stores every time as a Neo4j DATETIME in UTC.

Naive datetimes are refused: a time without a zone is ambiguous, and guessing is how memories
end up an hour (or a day) off.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from graphmem.errors import InvalidInput

UTC = timezone.utc


def utcnow() -> datetime:
    """The current time, timezone-aware, in UTC."""
    return datetime.now(UTC)


def to_utc(value: Any, field: str) -> datetime:
    """Coerce `value` (aware `datetime`, ISO 8601 string with offset, or `neo4j.time.DateTime`)
    to an aware UTC `datetime`.

    Raises `InvalidInput` naming `field` for naive datetimes, strings without an offset, values outside years
    1-9999 in UTC, or anything else.
    """
    if hasattr(value, "to_native"):  # neo4j.time.DateTime
        value = value.to_native()
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as exc:
            raise InvalidInput(f"{field}: not an ISO 8601 datetime: {value!r}", field=field) from exc
    if not isinstance(value, datetime):
        raise InvalidInput(f"{field}: expected a datetime, got {type(value).__name__}", field=field)
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{field}: datetime must carry a timezone (naive datetimes are refused)", field=field)
    try:
        return value.astimezone(UTC)
    except OverflowError:
        raise InvalidInput(f"{field}: {value.isoformat()} is outside years 1-9999 in UTC", field=field) from None


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def from_us(us: int | None) -> datetime | None:
    """A UTC datetime from integer microseconds since the epoch (how hot queries return times: decoding a
    `neo4j.time.DateTime` costs the driver 50-100 us a value)."""
    return None if us is None else _EPOCH + timedelta(microseconds=us)
