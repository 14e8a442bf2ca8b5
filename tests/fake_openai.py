"""A scriptable, in-process stand-in for an OpenAI-compatible HTTP API (tests only).

Runs `http.server` on 127.0.0.1 (a free port) in a daemon thread. For each path
(`/v1/embeddings`, `/v1/chat/completions`, ...) a test queues scripted replies; each request to that
path pops the next one. When a path's queue is empty its default handler answers (set with
`set_default`), else a 404 in OpenAI's error shape. Every request is recorded.

    with FakeOpenAIServer() as srv:
        srv.set_default("/v1/embeddings", embeddings_handler(dimension=8))
        srv.script("/v1/embeddings", Reply(429, {"error": {"message": "slow down"}}, headers={"Retry-After": "0"}))
        srv.script("/v1/chat/completions", Reply(200, chat_completion_body('{"facts": []}')))
        client = openai.OpenAI(base_url=srv.base_url, api_key="test", max_retries=0)

A queued item is a `Reply` or a callable `RecordedRequest -> Reply` (to answer from the request).
`Reply.delay_s` sleeps before answering (to provoke client timeouts).
"""
from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np

__all__ = [
    "FakeOpenAIServer",
    "RecordedRequest",
    "Reply",
    "chat_completion_body",
    "chat_handler",
    "deterministic_vector",
    "embeddings_handler",
    "error_body",
]


@dataclass
class Reply:
    """One scripted HTTP reply: status code, JSON body (or raw `body` bytes), headers, delay in seconds."""

    status: int = 200
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    body: bytes | None = None


@dataclass
class RecordedRequest:
    """A request the server received. `body` is raw bytes; `json()` parses it."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    received_at: float

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


Responder = Reply | Callable[[RecordedRequest], Reply]


def error_body(message: str, type_: str = "server_error", code: str | None = None) -> dict[str, Any]:
    """An OpenAI-style error JSON body."""
    return {"error": {"message": message, "type": type_, "param": None, "code": code}}


def deterministic_vector(text: str, dimension: int) -> list[float]:
    """A unit vector of `dimension` floats derived from sha256(text): same text, same vector."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")
    v = np.random.default_rng(seed).standard_normal(dimension)
    return (v / np.linalg.norm(v)).tolist()


def embeddings_handler(dimension: int) -> Callable[[RecordedRequest], Reply]:
    """Default handler for POST /v1/embeddings: deterministic vectors of `dimension` floats.

    Honours `encoding_format` ("float" or "base64", little-endian float32 as OpenAI sends) and a
    `dimensions` request field, if present, overrides `dimension`.
    """

    def handle(req: RecordedRequest) -> Reply:
        body = req.json() or {}
        inputs = body.get("input", [])
        if isinstance(inputs, str):
            inputs = [inputs]
        dim = int(body.get("dimensions") or dimension)
        data = []
        for i, text in enumerate(inputs):
            vec = deterministic_vector(str(text), dim)
            emb: Any = vec
            if body.get("encoding_format") == "base64":
                emb = base64.b64encode(np.asarray(vec, dtype="<f4").tobytes()).decode()
            data.append({"object": "embedding", "index": i, "embedding": emb})
        n_tokens = sum(len(str(t).split()) for t in inputs)
        return Reply(200, {"object": "list", "data": data, "model": body.get("model", "fake"),
                           "usage": {"prompt_tokens": n_tokens, "total_tokens": n_tokens}})

    return handle


def chat_completion_body(content: str, *, model: str = "fake-chat", finish_reason: str = "stop",
                         prompt_tokens: int = 10, completion_tokens: int = 5) -> dict[str, Any]:
    """A minimal non-streaming /v1/chat/completions response whose single choice says `content`."""
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "finish_reason": finish_reason, "logprobs": None,
                     "message": {"role": "assistant", "content": content, "refusal": None}}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
    }


def chat_handler(reply_for: Callable[[list[dict[str, Any]]], str]) -> Callable[[RecordedRequest], Reply]:
    """Default handler for POST /v1/chat/completions: content = reply_for(request messages)."""

    def handle(req: RecordedRequest) -> Reply:
        body = req.json() or {}
        return Reply(200, chat_completion_body(reply_for(body.get("messages", [])), model=body.get("model", "fake-chat")))

    return handle


class FakeOpenAIServer:
    """The server. `base_url` ("http://127.0.0.1:PORT/v1") is what to give `openai.OpenAI(base_url=...)`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self._queues: dict[str, deque[Responder]] = {}
        self._defaults: dict[str, Callable[[RecordedRequest], Reply]] = {}
        self._lock = threading.Lock()
        self.requests: list[RecordedRequest] = []
        self._httpd = ThreadingHTTPServer((host, port), self._make_handler())
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # --- scripting -------------------------------------------------------------------------
    def script(self, path: str, *replies: Responder) -> FakeOpenAIServer:
        """Queue replies for `path` (e.g. "/v1/embeddings"); each request pops one, in order."""
        with self._lock:
            self._queues.setdefault(path, deque()).extend(replies)
        return self

    def set_default(self, path: str, handler: Callable[[RecordedRequest], Reply]) -> FakeOpenAIServer:
        """Answer `path` with `handler(request)` whenever its queue is empty."""
        with self._lock:
            self._defaults[path] = handler
        return self

    def pending(self, path: str) -> int:
        """How many scripted replies for `path` have not been used yet."""
        with self._lock:
            return len(self._queues.get(path, ()))

    def requests_for(self, path: str) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.requests if r.path == path]

    def reset(self) -> None:
        """Forget queued replies, default handlers and recorded requests."""
        with self._lock:
            self._queues.clear()
            self._defaults.clear()
            self.requests.clear()

    # --- lifecycle -------------------------------------------------------------------------
    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        if self._thread is None:
            self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                            name="fake-openai", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._httpd.server_close()

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # --- internals -------------------------------------------------------------------------
    def _next_reply(self, req: RecordedRequest) -> Reply:
        with self._lock:
            self.requests.append(req)
            queue = self._queues.get(req.path)
            responder: Responder | None = queue.popleft() if queue else self._defaults.get(req.path)
        if responder is None:
            return Reply(404, error_body(f"fake server: nothing scripted for {req.method} {req.path}", "not_found"))
        return responder(req) if callable(responder) else responder

    def _make_handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                req = RecordedRequest(self.command, self.path.split("?", 1)[0],
                                      {k.lower(): v for k, v in self.headers.items()}, body, time.time())
                reply = server._next_reply(req)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                payload = reply.body if reply.body is not None else (
                    json.dumps(reply.json).encode() if reply.json is not None else b"")
                try:
                    self.send_response(reply.status)
                    headers = {k.lower(): v for k, v in reply.headers.items()}
                    if payload and "content-type" not in headers:
                        self.send_header("Content-Type", "application/json")
                    for k, v in reply.headers.items():
                        self.send_header(k, v)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):  # client gave up (timeout test)
                    self.close_connection = True

            do_POST = do_GET = do_PUT = do_DELETE = _handle

            def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
                pass

        return Handler
