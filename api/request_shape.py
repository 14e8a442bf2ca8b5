"""What a route takes besides its validated fields: the query parameters it declares, whether it takes a body.

FastAPI validates the parameters a route declares and drops the rest without a word; pydantic bodies refuse
unknown fields (`graphmem.models.Input`), but a query string or a body sent to a route that has none would still be
ignored, and a misspelt filter (`as_off`), a plural where the route takes `predicate`, or `{"force": true}` sent to
a route that reads `?force=` would answer as if it had not been sent. `check_request_shape` refuses those with a
422 listing the faults in `errors`, as request validation does. A body is read as JSON only when its Content-Type
says so (FastAPI's rule: `application/json` or `application/*+json`); any other body (curl's `-d` without
`-H "Content-Type: application/json"` sends a form-encoded one) was answered "body: must be a JSON object" when it
was one, so it is a 415 naming `Content-Type` instead. A header the operation reads one value of
(`Idempotency-Key`, `If-Match`, and `Content-Type` on an operation that takes a body) sent on several lines is a 422
naming it: Starlette reads the first line and drops the others, so a retry under two keys replayed one of them, a pin
write naming two versions wrote at one, and a body sent as `application/json` and `text/plain` was read as JSON. The
routes' shapes are read once per app from its OpenAPI document, the contract callers see.
"""
from __future__ import annotations

import email.message
from dataclasses import dataclass

from fastapi import Request
from fastapi.exceptions import RequestValidationError

from graphmem.errors import UnsupportedMediaType


@dataclass(frozen=True)
class Shape:
    """One operation's query parameters (name -> takes a list, i.e. may repeat), its header parameters other than
    the API key's (lower-case name -> the name as the docs and problems spell it, `If-Match`), and whether it takes a
    body."""

    query: dict[str, bool]
    body: bool
    headers: dict[str, str]


KEY_HEADERS = frozenset({"authorization", "x-api-key"})
"""The API key's headers: `api.deps` reads every line of each (two different keys are a 401, one key sent twice is
that key)."""


def _takes_list(schema: dict) -> bool:
    return schema.get("type") == "array" or any(_takes_list(s) for s in schema.get("anyOf", []))


def shapes(app) -> dict[tuple[str, str], Shape]:
    """(path template, METHOD) -> `Shape`, from `app.openapi()`; computed once and kept on `app.state`."""
    found = getattr(app.state, "request_shapes", None)
    if found is None:
        found = app.state.request_shapes = {
            (path, method.upper()): Shape(
                query={p["name"]: _takes_list(p.get("schema", {})) for p in op.get("parameters", [])
                       if p["in"] == "query"},
                body="requestBody" in op,
                headers={p["name"].lower(): "-".join(w.capitalize() for w in p["name"].split("-"))
                         for p in op.get("parameters", [])
                         if p["in"] == "header" and p["name"].lower() not in KEY_HEADERS})
            for path, ops in app.openapi()["paths"].items() for method, op in ops.items()}
    return found


MAX_ERRORS = 20
"""Faults listed per request: a URL of thousands of stray parameters gets the first 20, not a reply of megabytes."""


async def check_request_shape(request: Request) -> None:
    """Raise `UnsupportedMediaType` (415, field `Content-Type`) for a non-empty body sent to an operation that takes
    one without a JSON Content-Type (`is_json`); then `RequestValidationError` (422, the faults in `errors`, at most
    `MAX_ERRORS`) for query parameters the operation does not declare, a single-valued one given more than once, a
    header parameter it declares (or `Content-Type`, when it takes a body) sent on more than one line (named as the
    docs spell it: `If-Match`; a repeated Content-Type is this 422, not the 415), or
    a non-empty body sent to an operation without one (a chunked body is read to see whether it is empty)."""
    route = request.scope.get("route")
    shape = shapes(request.app).get((getattr(route, "path_format", None), request.method)) if route else None
    if shape is None:
        return
    single = {**shape.headers, **({"content-type": "Content-Type"} if shape.body else {})}
    repeated = [name for name in single if len(request.headers.getlist(name)) > 1]
    if shape.body and "content-type" not in repeated and not is_json(request.headers.get("content-type")) \
            and await _has_body(request):
        sent = request.headers.get("content-type")
        raise UnsupportedMediaType(
            f"Content-Type: the body is read as JSON only when sent with Content-Type: application/json (this "
            f"request {'sent ' + repr(sent) if sent else 'sent none'}; curl -d sends a form unless given -H "
            "'Content-Type: application/json')", field="Content-Type")
    errors = []
    takes = ", ".join(sorted(shape.query)) or "none"
    for name in dict.fromkeys(request.query_params.keys()):
        if name not in shape.query:
            errors.append({"loc": ("query", name or "(empty name)"), "type": "unknown_parameter",
                           "msg": f"not a query parameter of {request.method} {route.path_format} (it takes {takes})"})
        elif not shape.query[name] and len(request.query_params.getlist(name)) > 1:
            errors.append({"loc": ("query", name), "type": "multiple_values",
                           "msg": "given more than once; it takes one value"})
    for name in repeated:
        errors.append({"loc": ("header", single[name]), "type": "multiple_values",
                       "msg": "sent more than once; it takes one value"})
    if not shape.body and await _has_body(request):
        options = f" (its options are query parameters: {takes})" if shape.query else ""
        errors.append({"loc": ("body",), "type": "unexpected_body",
                       "msg": f"{request.method} {route.path_format} takes no body{options}"})
    if errors:
        raise RequestValidationError(errors[:MAX_ERRORS])


def is_json(content_type: str | None) -> bool:
    """Whether a Content-Type is one FastAPI reads a body as JSON for: `application/json` or `application/*+json`,
    parameters such as a charset aside (a request without one is not read as JSON)."""
    if not content_type:
        return False
    message = email.message.Message()
    message["content-type"] = content_type
    subtype = message.get_content_subtype()
    return message.get_content_maintype() == "application" and (subtype == "json" or subtype.endswith("+json"))


async def _has_body(request: Request) -> bool:
    if int(request.headers.get("content-length") or 0) > 0:
        return True
    return "chunked" in request.headers.get("transfer-encoding", "").lower() and bool(await request.body())
