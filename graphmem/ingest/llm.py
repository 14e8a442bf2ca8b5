"""A chat-completions client for extraction, disambiguation and summaries: the `openai` package against any
OpenAI-compatible endpoint.

- One `openai.OpenAI(base_url, api_key, timeout=settings.llm_timeout_s, max_retries=0)`; retries are tenacity's:
  429, 5xx, timeouts and connection errors are retried up to `settings.llm_max_retries` times (so at most
  `llm_max_retries + 1` calls), waiting what `Retry-After`/`Retry-After-Ms` asks (capped at 60 s), else
  exponential backoff with jitter (0.5 s, 1 s, 2 s, ... capped at 8 s, plus up to 0.5 s).
- Bounded concurrency per endpoint: at most `settings.llm_max_concurrency` requests in flight per base URL in this
  process (a semaphore shared by every client of that URL).
- Usage: every call's tokens go to `graphmem.metrics.LLM_TOKENS` / `LLM_CALLS` (per tenant) and to the `Usage`
  the caller passes (per job); cost in USD from `settings.llm_cost_*_usd_per_1m`.
- A caller's `before_send` runs right before every request (the first and each retry, once the concurrency bound
  let it through): the worker's check that the episode in the messages is still within retention, and the
  compaction's that the turns it folds are (graphmem/context/compaction.py), whose exception stops the call before
  anything more is sent.
- Replies are JSON objects (`response_format`) for extraction and disambiguation; the summarizer asks for plain text
  (`json_object=False`) of at most `max_tokens`.
Errors: `LLMUnavailable` (transient, after the retries) and `LLMRejected` (a 4xx other than 429: permanent).
"""
from __future__ import annotations

import json
import random
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import tenacity
from pydantic import BaseModel, ValidationError

from graphmem.embeddings import _is_retryable, _retry_after_s
from graphmem.metrics import LLM_CALLS, LLM_TOKENS
from graphmem.settings import Settings

RETRY_AFTER_CAP_S = 60.0
_SEMAPHORES: dict[str, threading.BoundedSemaphore] = {}
_SEM_LOCK = threading.Lock()


class LLMUnavailable(Exception):
    """The endpoint failed (429/5xx/timeout/connection) on every attempt. Transient: the job is retried later."""


class LLMRejected(Exception):
    """The endpoint refused the request (4xx other than 429). Permanent for this job."""


@dataclass
class Usage:
    """LLM usage of one job: calls, prompt and completion tokens, cost (USD)."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0


def endpoint_semaphore(base_url: str, size: int) -> threading.BoundedSemaphore:
    """The process-wide semaphore bounding concurrent requests to `base_url`."""
    with _SEM_LOCK:
        if base_url not in _SEMAPHORES:
            _SEMAPHORES[base_url] = threading.BoundedSemaphore(max(1, size))
        return _SEMAPHORES[base_url]


def _wait(state: tenacity.RetryCallState) -> float:
    asked = _retry_after_s(state.outcome.exception() if state.outcome else None)
    if asked is not None:
        return min(asked, RETRY_AFTER_CAP_S)
    return min(8.0, 0.5 * 2.0 ** (state.attempt_number - 1)) + random.uniform(0.0, 0.5)


class ChatClient:
    """Chat completions with retries, a per-endpoint concurrency bound and usage accounting."""

    def __init__(self, settings: Settings, client=None):
        import openai
        if not settings.llm_configured and client is None:
            raise LLMRejected("no LLM configured (GRAPHMEM_LLM_BASE_URL / GRAPHMEM_LLM_API_KEY)")
        self.settings = settings
        self.model = settings.llm_model
        self.base_url = settings.llm_endpoint   # never OPENAI_BASE_URL from the environment: what settings say
        self._client = client or openai.OpenAI(base_url=self.base_url, api_key=settings.llm_api_key or "unused",
                                               timeout=settings.llm_timeout_s, max_retries=0)
        self._sem = endpoint_semaphore(self.base_url, settings.llm_max_concurrency)

    def _once(self, tenant_id: str, messages: list[dict], usage: Usage, before_send: Callable[[], None] | None,
              options: dict):
        with self._sem:
            if before_send is not None:
                before_send()
            usage.calls += 1
            try:
                resp = self._client.chat.completions.create(model=self.model, messages=messages, temperature=0,
                                                            **options)
            except Exception as exc:
                LLM_CALLS.labels(tenant_id, "error").inc()
                raise exc
        LLM_CALLS.labels(tenant_id, "ok").inc()
        u = getattr(resp, "usage", None)
        if u is not None:
            p, c = int(u.prompt_tokens or 0), int(u.completion_tokens or 0)
            usage.prompt_tokens += p
            usage.completion_tokens += c
            usage.cost_usd += (p * self.settings.llm_cost_prompt_usd_per_1m
                               + c * self.settings.llm_cost_completion_usd_per_1m) / 1e6
            LLM_TOKENS.labels(tenant_id, "prompt").inc(p)
            LLM_TOKENS.labels(tenant_id, "completion").inc(c)
        return resp

    def complete(self, tenant_id: str, messages: list[dict], usage: Usage, *,
                 before_send: Callable[[], None] | None = None, json_object: bool = True,
                 max_tokens: int | None = None) -> str:
        """The assistant's reply text for `messages`. `before_send()` is called right before each request (the first
        and every retry); what it raises ends the call unchanged, not retried, with nothing more sent. The reply is
        asked for as a JSON object (`response_format`) unless `json_object` is false; `max_tokens` (tokens) caps
        its length. Raises `LLMUnavailable` or `LLMRejected`."""
        retrying = tenacity.Retrying(stop=tenacity.stop_after_attempt(self.settings.llm_max_retries + 1),
                                     wait=_wait, retry=tenacity.retry_if_exception(_is_retryable), reraise=True)
        options: dict = {"response_format": {"type": "json_object"}} if json_object else {}
        if max_tokens is not None:
            options["max_tokens"] = max_tokens
        try:
            resp = retrying(self._once, tenant_id, messages, usage, before_send, options)
        except Exception as exc:
            if _is_retryable(exc):
                raise LLMUnavailable(f"LLM unavailable after {usage.calls} calls: {type(exc).__name__}: "
                                     f"{_short(exc)}") from exc
            import openai
            if isinstance(exc, openai.APIStatusError):
                raise LLMRejected(f"LLM rejected the request: HTTP {exc.status_code}: {_short(exc)}") from exc
            raise
        if not resp.choices:
            return ""
        return resp.choices[0].message.content or ""


def _short(exc: Exception, n: int = 300) -> str:
    s = str(exc)
    return s if len(s) <= n else s[:n] + "..."


M = TypeVar("M", bound=BaseModel)
_FENCE = re.compile(r"```(?:json)?\s*(.*?)\s*```", re.S)


def parse_reply(reply: str, model: type[M]) -> M:
    """An LLM reply -> `model`. Accepts the JSON object bare or in a ```json fence. Raises `ValueError` with a short
    message fit for a repair prompt: not JSON (with position), not an object, or the first schema error (with its
    path and the number of errors)."""
    text = reply.strip()
    fence = _FENCE.fullmatch(text)
    if fence:
        text = fence.group(1)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at character {exc.pos})") from exc
    if not isinstance(data, dict):
        raise ValueError("the reply must be a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"])
        more = f" ({exc.error_count()} errors)" if exc.error_count() > 1 else ""
        raise ValueError(f"{loc}: {first['msg']}{more}") from exc
