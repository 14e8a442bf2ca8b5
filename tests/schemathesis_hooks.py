"""Schemathesis hooks for tests/test_schemathesis.py (loaded through SCHEMATHESIS_HOOKS): every error reply must be
an RFC 9457 problem+json body with no stack trace."""
from __future__ import annotations

import json

import schemathesis


@schemathesis.check
def problem_json(ctx, response, case):
    """4xx/5xx replies are application/problem+json with status, title and detail (RFC 9457 §3.1)."""
    if response.status_code < 400:
        return None
    ctype = response.headers.get("content-type", [""])
    ctype = ctype[0] if isinstance(ctype, list) else ctype
    if not ctype.startswith("application/problem+json"):
        raise AssertionError(f"error {response.status_code} is {ctype!r}, not application/problem+json")
    body = json.loads(response.content)
    if body.get("status") != response.status_code or not body.get("title") or "detail" not in body:
        raise AssertionError(f"problem body lacks status/title/detail: {body}")
    if "Traceback" in response.text:
        raise AssertionError("a stack trace left the server")
    return None
