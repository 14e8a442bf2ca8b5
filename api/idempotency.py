"""Idempotent API writes: a write sent without an `episode_id` is recorded as an event episode whose id is the
write's provenance, and an `Idempotency-Key` header makes that episode, and so the call, safe to retry
(IETF draft-ietf-httpapi-idempotency-key-header: the same key with the same request replays the first answer; the
same key with another request is refused).

A retry that arrives while the first try is still running waits for it (`Settings.idempotency_wait_s`) and
replays the answer the first try kept; when the first try failed and deleted its record, the retry records the
call and runs it itself. A first try that kept no answer (it failed after the episode was cited, it died, or it
ran before answers were kept, or it has run longer than the wait) leaves the retry to run the write again, and each
route's own replay checks (an asserted fact's `duplicate`, `corrected_by`, `retracted_by`) keep it from writing
twice.
"""
from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import BaseModel
from tenacity import Retrying, retry_if_result, stop_after_delay, wait_exponential

from graphmem.errors import Conflict, InvalidInput
from graphmem.keys import Principal
from graphmem.models import EpisodeIn
from graphmem.services import Services
from graphmem.timeutil import to_utc, utcnow

FAILED = ""
"""The answer kept by a first try that failed after something cited its episode: not an answer, run again."""


def call_key(what: str, idempotency_key: str) -> str:
    """The episode idempotency key for a call: "api:" + SHA-256 of the call and the caller's key (fixed length)."""
    return "api:" + hashlib.sha256(f"{what}\n{idempotency_key}".encode()).hexdigest()


def body_digest(body: BaseModel) -> str:
    """SHA-256 (64 hex digits) of the request body as validated (its JSON dump): what tells a retry from another
    request under the same Idempotency-Key."""
    return hashlib.sha256(body.model_dump_json().encode()).hexdigest()


@dataclass
class RecordedCall:
    """One recorded API write. `episode_id`: its provenance episode; `replayed`: the call was recorded before under
    the same Idempotency-Key; `kept`: the JSON answer the first try kept (None when there is none to replay)."""

    services: Services
    tenant_id: str
    episode_id: str
    replayed: bool
    kept: str | None
    idempotent: bool

    def keep(self, answer: BaseModel) -> None:
        """Keep `answer` for retries under the same key (nothing without an Idempotency-Key)."""
        if self.idempotent:
            self.services.graph.keep_call_result(self.tenant_id, self.episode_id, answer.model_dump_json())


GONE, RUNNING = "gone", "running"


def _first_try(services: Services, tenant_id: str, episode_id: str) -> str | None:
    """Wait while the first try of a recorded call runs, then its kept answer: the JSON answer, None when there is
    none to replay (it failed after something cited the episode, or was recorded more than `idempotency_wait_s`
    seconds ago without an answer: it died or predates kept answers; or the wait ran out), or `GONE` when it failed
    and deleted its record. Polls the call's episode with exponential back-off (20 ms doubling to 250 ms;
    tenacity)."""
    wait_s = services.settings.idempotency_wait_s

    def state() -> str | None:
        row = services.graph.call_state(tenant_id, episode_id)
        if row is None or row["recorded_at"] is None:   # no record, or one deleted while read (its fields null)
            return GONE
        if row["result"] is not None:
            return row["result"] or None   # '' (FAILED): not an answer
        return None if (utcnow() - to_utc(row["recorded_at"], "recorded_at")).total_seconds() > wait_s else RUNNING

    return Retrying(retry=retry_if_result(lambda s: s == RUNNING), stop=stop_after_delay(wait_s),
                    wait=wait_exponential(multiplier=0.01, min=0.02, max=0.25),
                    retry_error_callback=lambda _: None)(state)


@contextmanager
def recorded_call(services: Services, who: Principal, what: str, body: BaseModel,
                  idempotency_key: str | None) -> Iterator[RecordedCall]:
    """Record an API write as an episode of kind "event" (source "system") through the ingest service and yield
    it as a `RecordedCall`: its id is the write's provenance; on a retry under the same `idempotency_key`, `kept`
    holds the first try's answer to replay (waiting for a first try still running, module docstring). The content
    names the call, the key id and, with an idempotency key, a digest of the body, never a secret: the same key
    with another body is an `InvalidInput` naming Idempotency-Key; the same body sent under it with another API key
    of the tenant replays the first (an idempotency key is the tenant's). If the write raises, an episode this call
    created is deleted again (unless something already cites it; then the call is marked failed, so a retry runs
    it again), so a refused request leaves nothing behind."""
    digest = body_digest(body) if idempotency_key else ""
    # 32 hex digits: a token that long is never taken for a card number by the redaction that every episode's content
    # goes through; the 16 written before were all digits passing the Luhn check in about one call of
    # 20,000 (redacted, so that call's retry under another API key was refused). Records written so stay matchable.
    request = f" (request {digest[:32]})" if digest else ""
    requests = (request, f" (request {digest[:16]})") if digest else ("",)
    ep = EpisodeIn(kind="event", source="system", occurred_at=utcnow(), role="system",
                   content=f"API call {what} by key {who.key_id}{request}",
                   idempotency_key=call_key(what, idempotency_key) if idempotency_key else None)
    tenant = who.tenant_id
    deadline = time.monotonic() + services.settings.idempotency_wait_s
    while True:   # a first try that fails deletes its record: record the call again and run it here
        try:
            episode, created = services.ingest.append_episodes(tenant, [ep], extract=False, searchable=False,
                                                                batch=False)[0]
        except InvalidInput as exc:
            if not (exc.field and exc.field.endswith("idempotency_key")):
                raise
            # the key is the tenant's: the same request sent first with another of its API keys (another agent, or
            # this one before its key was rotated) is this call, replayed; it stays recorded as the first key's
            stored = services.graph.episode_by_key(tenant, ep.idempotency_key)
            if stored is None and time.monotonic() <= deadline:   # the first try failed meanwhile: record this one
                continue
            if stored is None or not (stored.content.startswith(f"API call {what} by key ")
                                      and stored.content.endswith(requests)):
                raise InvalidInput("Idempotency-Key: this key was used for a different request (another body); "
                                   "use a new key", field="Idempotency-Key") from None
            episode, created = stored, False
        kept = None if created else _first_try(services, tenant, episode.id)
        if kept != GONE:
            break
        if time.monotonic() > deadline:   # each failed try was another's; many at once take turns, not forever
            raise Conflict("Idempotency-Key: concurrent tries of this request keep failing; retry it later",
                           field="Idempotency-Key")
    call = RecordedCall(services, tenant, episode.id, replayed=not created, kept=kept,
                        idempotent=idempotency_key is not None)
    try:
        yield call
    except Exception:
        if created and not services.graph.discard_episode(tenant, episode.id) and call.idempotent:
            services.graph.keep_call_result(tenant, episode.id, FAILED)
        raise
