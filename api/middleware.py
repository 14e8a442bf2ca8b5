"""ASGI middleware: request id + structured access log, request latency metric, request body size limit."""
from __future__ import annotations

import json
import logging
import time
import uuid

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from graphmem.metrics import REQUEST_LATENCY

log = logging.getLogger("graphmem.access")


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
        rid = headers.get(b"x-request-id", b"").decode()[:100] or uuid.uuid4().hex
        scope.setdefault("state", {})["request_id"] = rid
        declared = headers.get(b"content-length")
        if declared and declared.isdigit() and int(declared) > self.max_body:
            await _too_large(send, rid, self.max_body)
            return
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
            if msg["type"] == "http.response.start":
                status["code"] = msg["status"]
                msg.setdefault("headers", []).append((b"x-request-id", rid.encode()))
            await send(msg)

        start = time.perf_counter()
        try:
            await self.app(scope, limited_receive, send_wrapper)
        except BodyTooLarge:
            await _too_large(send, rid, self.max_body)
            status["code"] = 413
        finally:
            elapsed = time.perf_counter() - start
            route = scope.get("route")
            template = getattr(route, "path", "unmatched")
            REQUEST_LATENCY.labels(template, scope["method"], str(status["code"])).observe(elapsed)
            log.info(json.dumps({"request_id": rid, "method": scope["method"], "route": template,
                                 "path": scope["path"], "status": status["code"],
                                 "duration_ms": round(elapsed * 1000, 2)}))


async def _too_large(send: Send, rid: str, limit: int) -> None:
    body = json.dumps({"type": "about:blank", "title": "Request body too large", "status": 413,
                       "detail": f"request bodies are limited to {limit} bytes", "request_id": rid}).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/problem+json"), (b"x-request-id", rid.encode()),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})
