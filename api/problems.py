"""RFC 9457 problem details (`application/problem+json`) for every error the service returns.

A problem names the field at fault (`field`, plus `errors` for request-validation failures) and never carries
a stack trace.
"""
from __future__ import annotations

import difflib
import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.deps import authorize
from graphmem.errors import GraphmemError
from graphmem.models import error_message

log = logging.getLogger("graphmem.api")
PROBLEM = "application/problem+json"


class FieldError(BaseModel):
    """One request-validation error: the field as the caller spelled it ("facts[2].predicate") and why."""

    field: str | None = None
    message: str


class Problem(BaseModel):
    """The body of every error reply (RFC 9457 problem details): `status` is the HTTP status, `field` the request
    field at fault when one is (dotted, list indexes in brackets), `errors` every field error of a 422."""

    model_config = ConfigDict(extra="allow")

    type: str = "about:blank"
    title: str
    status: int
    detail: str
    field: str | None = None
    instance: str | None = None
    request_id: str | None = None
    errors: list[FieldError] | None = None


def _http_field(request: Request, status: int) -> str | None:
    """What a refusal from routing or the key checks names as its `field`: the key's header for 401 and 403 (the
    one the request sent, `Authorization` when it sent neither), the path for an unknown route, the method for one
    the route does not take."""
    if status in (401, 403):
        return "X-API-Key" if "x-api-key" in request.headers and "authorization" not in request.headers \
            else "Authorization"
    return {404: "path", 405: "method"}.get(status)


def problem(status: int, title: str, detail: str, *, field: str | None = None, request: Request | None = None,
            **extra) -> JSONResponse:
    """A problem+json response. `type` is about:blank per RFC 9457 §4.2.1 unless a more specific one is known."""
    body = {"type": "about:blank", "title": title, "status": status, "detail": detail}
    if field:
        body["field"] = field
    if request is not None:
        body["instance"] = request.url.path
        rid = getattr(request.state, "request_id", None)
        if rid:
            body["request_id"] = rid
    body.update(extra)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    return JSONResponse(body, status_code=status, media_type=PROBLEM, headers=headers)


_LOCATIONS = ("body", "query", "path", "header", "cookie")
_TAG = "type"
"""The key that tags the API's tagged unions (pin values, graphmem.context.pins.PinValue)."""


def _loc(loc, kind: str = "", body=None) -> str:
    """A pydantic error location as the caller names the field: the request part (body, query, ...) dropped,
    list indexes in brackets ("facts[2].predicate"); "body" for a body that is not valid JSON (whose location is
    a character offset). A tagged union's tag, which pydantic puts in the location ("value.amount.currency" for
    `{"value": {"type": "amount", ...}}`), is left out when `body` shows it is the object's `type` there."""
    if kind == "json_invalid":
        return "body"
    parts = list(loc)
    if len(parts) > 1 and parts[0] in _LOCATIONS:
        node = body if parts[0] == "body" else None
        parts = parts[1:]
    else:
        node = None
    out = ""
    for p in parts:
        if isinstance(node, dict) and isinstance(p, str) and p not in node and node.get(_TAG) == p:
            continue   # the tag of a tagged union
        if isinstance(node, dict):
            node = node.get(p)
        elif isinstance(node, list) and isinstance(p, int) and 0 <= p < len(node):
            node = node[p]
        else:
            node = None
        p = str(p)
        out += f"[{p}]" if p.isdigit() else (f".{p}" if out else p)
    return out


_MESSAGES = {"extra_forbidden": "not a field of this request (misspelt, or read-only?)",
             "model_attributes_type": "must be a JSON object", "dict_type": "must be a JSON object"}


def _body_fields(request: Request) -> list[str]:
    """The top-level field names of the matched route's JSON body (as a request spells them), or [] when unknown."""
    field = getattr(request.scope.get("route"), "body_field", None)
    model = getattr(getattr(field, "field_info", None), "annotation", None)
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        return []
    return [f.alias or name for name, f in model.model_fields.items()]


def _error(e: dict, body, fields: list[str] = ()) -> dict:
    """One pydantic error as {field, message}. A tagged union's bad or missing tag names the tag field itself
    (`value.type`: "must be one of 'amount', ...") rather than the union. An unknown top-level body field names the
    closest of `fields` (the body's own, `_body_fields`), as `difflib` ranks them: `target` -> `targets`."""
    field, kind, ctx = _loc(e.get("loc", ()), e.get("type", ""), body), e.get("type", ""), e.get("ctx") or {}
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        tag = str(ctx.get("discriminator", "type")).strip("'")
        field = f"{field}.{tag}" if field else tag
        message = f"must be one of {ctx['expected_tags']}" if "expected_tags" in ctx else "is required"
        return {"field": field, "message": message}
    message = _MESSAGES.get(kind) or error_message(e)
    loc, got = e.get("loc", ()), e.get("input")
    if kind == "extra_forbidden" and len(loc) == 2 and loc[0] == "body" and isinstance(loc[1], str):
        near = difflib.get_close_matches(loc[1], fields, n=1, cutoff=0.6)
        if near:
            message += f"; did you mean {near[0]!r}?"
    if kind == "json_invalid" and ctx.get("error"):   # the decoder's words: what and where (a repeated name too)
        at = loc[1] if len(loc) > 1 and isinstance(loc[1], int) and loc[1] > 0 else None
        message = f"not valid JSON: {ctx['error']}" + (f" (at character {at})" if at is not None else "")
    if loc and loc[0] == "query" and kind.startswith("datetime") and isinstance(got, str) and " " in got:
        message += "; in a query string a '+' reads as a space: send an offset's '+' as %2B, or use Z"
    return {"field": field, "message": message}


def _invalid(request: Request, raw_errors, body=None) -> JSONResponse:
    """422 naming the first field at fault, with every error in `errors`. `body` is the parsed request body, to
    name fields inside tagged unions as the request spells them (`_loc`)."""
    fields = _body_fields(request) if any(e.get("type") == "extra_forbidden" for e in raw_errors) else []
    errors = [_error(e, body, fields) for e in raw_errors]
    first = errors[0] if errors else {"field": None, "message": "invalid request"}
    return problem(422, "Invalid input", f"{first['field']}: {first['message']}", field=first["field"] or None,
                   request=request, errors=errors)


def _named(field: str | None, detail: str) -> str:
    """`detail` as it starts with `field` ("fact_id: no fact 'x'"), the contract of every problem that names a field
    (docs/http.md, "Errors"): one that already does ("max_hops must be between 1 and 3", "entity_id: no entity
    'x'") is kept as it is."""
    return detail if not field or detail.startswith(field) else f"{field}: {detail}"


def _document(app: FastAPI) -> None:
    """Make the OpenAPI schema say what errors look like: every operation answers 4XX (and 5XX) with a `Problem`
    as application/problem+json, and so do its 422 (which FastAPI documents as its own `HTTPValidationError`) and
    the errors a route declares itself (404, 409 ...)."""

    def openapi() -> dict:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, openapi_version=app.openapi_version,
                                 description=app.description, routes=app.routes, tags=app.openapi_tags,
                                 servers=app.servers,
                                 separate_input_output_schemas=app.separate_input_output_schemas)
            schemas = schema.setdefault("components", {}).setdefault("schemas", {})
            defs = Problem.model_json_schema(ref_template="#/components/schemas/{model}")
            schemas.update(defs.pop("$defs", {}))
            schemas["Problem"] = defs
            for name in ("HTTPValidationError", "ValidationError"):
                schemas.pop(name, None)
            content = {PROBLEM: {"schema": {"$ref": "#/components/schemas/Problem"}}}
            for operations in schema.get("paths", {}).values():
                for op in operations.values():
                    responses = op.setdefault("responses", {})
                    if "422" in responses:
                        responses["422"] = {"description": "Invalid input: `field` names the first field at fault, "
                                                           "`errors` every one", "content": content}
                    for status, response in responses.items():   # a route's own 404, 409 ...
                        if status[0] in "45":
                            response["content"] = content
                    responses.setdefault("4XX", {"description": "Client error (401 no or bad key, 403, 404 "
                                                                "naming the unknown id's field, 409, 415 a body "
                                                                "not sent as application/json ...)",
                                                 "content": content})
                    responses.setdefault("5XX", {"description": "Server error or a dependency unavailable",
                                                 "content": content})
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi


def install(app: FastAPI) -> None:
    """Register the exception handlers that turn every error into a problem, and document them in OpenAPI."""
    _document(app)

    @app.exception_handler(GraphmemError)
    async def _graphmem(request: Request, exc: GraphmemError):
        return problem(exc.status, exc.title, _named(exc.field, exc.detail), field=exc.field, request=request)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        if any(e.get("type") == "json_invalid" for e in exc.errors()):
            # FastAPI parses a JSON body before the route's dependencies run: the key (401) and role (403) first
            try:
                await run_in_threadpool(authorize, request)
            except StarletteHTTPException as denied:
                return await _http(request, denied)
        return _invalid(request, exc.errors(), exc.body)

    @app.exception_handler(ValidationError)
    async def _model_validation(request: Request, exc: ValidationError):
        # a model built inside a handler from request data (e.g. a service input model) refused it
        return _invalid(request, exc.errors())

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 400:   # FastAPI's only 400: a body it could not read (api.json_body turns every
            # reason it knows, UTF-8 included, into a json_invalid 422 after the key check)
            return _invalid(request, [{"type": "json_invalid", "loc": ("body",),
                                       "msg": "not JSON: the body could not be read as JSON"}])
        titles = {401: "Unauthorized", 403: "Forbidden", 404: "Not found", 405: "Method not allowed"}
        return problem(exc.status_code, titles.get(exc.status_code, "Error"), str(exc.detail),
                       field=_http_field(request, exc.status_code), request=request)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.exception("unhandled error", extra={"path": request.url.path})
        return problem(500, "Internal error", "the server failed to handle this request; see its logs",
                       request=request)
