"""ASGI middleware: request id + structured access log, request latency metric, request body size limit.

Logs are JSON lines (`JsonFormatter`, installed by `configure_logging`): every record written while a request is
handled carries its `request_id` (a context variable set here), so an error log joins its access-log line.
"""
from __future__ import annotations

import contextvars
import json
import logging
import re
import sys
import time
import uuid
from datetime import datetime, timezone

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.metrics import REQUEST_LATENCY

log = logging.getLogger("graphmem.access")
_RID_JUNK = re.compile(r"[^A-Za-z0-9._:-]")
REQUEST_ID: contextvars.ContextVar[str | None] = contextvars.ContextVar("graphmem_request_id", default=None)


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts (UTC, ISO 8601), level, logger, message, request_id (when inside a request),
    the record's `fields` dict (the access log's method, route, status, duration_ms) and `exc` for exceptions."""

    def format(self, record: logging.LogRecord) -> str:
        out = {"ts": datetime.fromtimestamp(record.created, timezone.utc).isoformat(timespec="milliseconds"),
               "level": record.levelname.lower(), "logger": record.name, "message": record.getMessage()}
        rid = getattr(record, "request_id", None) or REQUEST_ID.get()
        if rid:
            out["request_id"] = rid
        out.update(getattr(record, "fields", None) or {})
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return json.dumps(out, default=str)


def configure_logging(level: str = "info") -> None:
    """Send the `graphmem` and `uvicorn` loggers to stderr as JSON lines (idempotent)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("graphmem", "uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level.upper())
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True  # graphmem.access replaces it (with the request id)


class BodyTooLarge(Exception):
    pass


class RequestContext:
    """Assigns `X-Request-ID` (or keeps the caller's), limits the body to `max_body_bytes` (413), records latency
    by route template and writes one JSON access-log line per request."""

    def __init__(self, app: ASGIApp, max_body_bytes: int):
        self.app, self.max_body = app, max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        rid = _RID_JUNK.sub("", headers.get(b"x-request-id", b"").decode("latin-1"))[:100] or uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        declared = headers.get(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body:
            await _too_large(send, rid, self.max_body, scope["path"])
            return
        token = REQUEST_ID.set(rid)
        seen = 0

        async def limited_receive() -> Message:
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge()
            return msg

        status = {"code": 500}

        async def send_wrapper(msg: Message) -> None:
            if seen > self.max_body:   # FastAPI turned our BodyTooLarge (a streamed body) into its own 400
                if msg["type"] == "http.response.start":
                    status["code"] = 413
                    await _too_large(send, rid, self.max_body, scope["path"])
                return
            if msg["type"] == "http.response.start":
                status["code"] = msg["status"]
                msg.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(msg)

        start = time.perf_counter()
        try:
            await self.app(scope, limited_receive, send_wrapper)
        except BodyTooLarge:
            await _too_large(send, rid, self.max_body, scope["path"])
            status["code"] = 413
        finally:
            elapsed = time.perf_counter() - start
            template = _route_template(scope)
            REQUEST_LATENCY.labels(template, scope["method"], str(status["code"])).observe(elapsed)
            log.info("request", extra={"request_id": rid, "fields": {
                "method": scope["method"], "route": template, "path": scope["path"], "status": status["code"],
                "duration_ms": round(elapsed * 1000, 2)}})
            REQUEST_ID.reset(token)


def _route_template(scope: Scope) -> str:
    """The path template of the route that answered (`/v1/facts/{fact_id}`), the metrics' and the log's `route`
    label; "unmatched" when none did (a 404 on an unknown path). FastAPI's own routes name themselves in the scope
    (`route`); Starlette's plain routes, which FastAPI uses for `/v1/openapi.json` and `/v1/docs`, leave only their
    `endpoint` there, so the router's route with that endpoint is looked up."""
    route = scope.get("route")
    if route is None and "endpoint" in scope and "router" in scope:
        route = next((r for r in scope["router"].routes if getattr(r, "endpoint", None) is scope["endpoint"]), None)
    return getattr(route, "path", "unmatched")


async def _too_large(send: Send, rid: str, limit: int, path: str) -> None:
    body = json.dumps({"type": "about:blank", "title": "Request body too large", "status": 413,
                       "detail": f"request bodies are limited to {limit} bytes", "field": "body", "instance": path,
                       "request_id": rid}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/problem+json"), (b"x-request-id", rid.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
