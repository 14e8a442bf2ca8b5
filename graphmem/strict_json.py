"""JSON text read as RFC 8259 defines it: the one reader of what callers send as JSON (request bodies, `json`
episodes' content, JSONL imports).

Python's `json.loads` reads more than JSON: the literals `NaN`, `Infinity` and `-Infinity`, and a number too large
for a float (`1e400`) as `inf`, so a CRM record `{"amount": NaN}` was mapped to the fact "... is worth nan EUR". It
also fails on some text with errors other than `json.JSONDecodeError` (a `ValueError` for an integer of more than
`sys.get_int_max_str_digits()` digits, a `RecursionError` for nesting deeper than the interpreter's stack), which
callers then reported as something else. `loads` raises `json.JSONDecodeError` for all of these, with a message
saying what is wrong.
"""
from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from typing import Any


class _NotJson(Exception):
    """Raised inside the decoder's hooks; `loads` turns it into a `json.JSONDecodeError`."""


def _constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON (RFC 8259 has no NaN or Infinity; send null, or the value as a string)")


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotJson(f"the number {text[:40]} is out of range (beyond a 64-bit float)")
    return value


def _int(text: str) -> int:
    limit = sys.get_int_max_str_digits()
    if limit and len(text.lstrip("-")) > limit:
        raise _NotJson(f"a number has {len(text.lstrip('-'))} digits (at most {limit} are read)")
    return int(text)


def loads(text: str | bytes, object_pairs_hook: Callable[[list[tuple[str, Any]]], Any] | None = None) -> Any:
    """The JSON value of `text` (str, or bytes in UTF-8, a leading byte order mark ignored as RFC 8259 section 8.1
    allows). Raises `json.JSONDecodeError` (a `ValueError`) when it is not JSON: the decoder's own errors (`pos` is
    the character at fault), and, at `pos` 0, bytes that are not UTF-8, `NaN` / `Infinity` / `-Infinity`, a number
    out of a float's range, an integer of more digits than Python converts, and nesting too deep to read.
    `object_pairs_hook` is `json.loads`' (e.g. refusing a repeated name by raising `json.JSONDecodeError`)."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise json.JSONDecodeError(f"the body must be UTF-8 (RFC 8259; byte {exc.object[exc.start]:#04x} at "
                                       f"byte {exc.start} is not)", "", 0) from None
    try:
        return json.loads(text, object_pairs_hook=object_pairs_hook, parse_constant=_constant, parse_float=_float,
                          parse_int=_int)
    except _NotJson as exc:
        raise json.JSONDecodeError(str(exc), text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError("arrays or objects nested too deep to read", text, 0) from None
