"""`Worker`: claims extraction jobs, runs the extractor, writes the facts, retries, dead-letters, resumes.

One job is one episode (see `graphmem.ingest.jobs`). For each claimed job the worker picks the extractor by kind
(json/event: the declarative mapping; message/text/tool_result: the LLM, or "skipped: no LLM configured"), applies
the write policy, sends the LLM path's ambiguous entity mentions to the LLM in one disambiguation call
(`graphmem.ingest.disambiguate`; on failure the deterministic resolver decides and the reason is recorded on the done
job), then writes the extraction and marks the job done in ONE transaction (`graphmem.ingest.apply`: the claim
fence, the facts through the core with supersession, the mapping's retractions in record order, refusals). A crash
anywhere before that commit leaves the job running with a lease that expires, after which any worker claims it again:
facts are written exactly once. Transient errors (LLM down, Neo4j) retry with exponential backoff (`jobs.backoff_s`);
after `settings.job_max_attempts` attempts the job is "dead" with the reason; permanent errors
(malformed output after repair, unmappable JSON, a rejected request) end it "failed" with the reason. Right before
each LLM request that carries an episode's content (the extraction and disambiguation calls, their repair calls and
the client's retries: `ChatClient.complete`'s `before_send`) the worker checks that the episode is still within
retention (`jobs.retained`), and the transaction that writes the extraction checks it again under the job's lock
(`jobs.holds`, cypher jobs/fence: a mapped JSON record is written from the content with no LLM call); past it
(`jobs.PastRetention`), nothing is sent or written, the job goes back to pending (the attempt not counted) and the
sweeper removes the episode.

Threads: `concurrency` claim-and-process loops plus one heartbeat renewing leases every `lease_s / 3` seconds.
`stop()` stops claiming, waits up to `grace_s` for jobs in progress and releases every job still held.
"""
from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Callable
from datetime import timedelta

from graphmem.errors import EmailTaken, GraphmemError, InvalidInput, NotFound
from graphmem.indexer import Indexer
from graphmem.ingest import jobs
from graphmem.ingest.apply import LeaseLost, apply_extraction, screen_extraction
from graphmem.ingest.disambiguate import Disambiguator
from graphmem.ingest.extract_llm import Extracted, ExtractionMalformed
from graphmem.ingest.jobs import Claim, PastRetention
from graphmem.ingest.llm import LLMRejected, LLMUnavailable
from graphmem.ingest.mapping import MappingError, extract as map_extract
from graphmem.ingest.policy import is_text
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.worker")


class PermanentFailure(Exception):
    """The job cannot succeed by retrying (its reason is recorded, status "failed")."""


PAST_RETENTION = "past retention since the claim: nothing (more) sent to the LLM nor written, left for the sweeper"
"""The reason of a job `PastRetention` ended."""


class Worker:
    """Processes extraction jobs of `tenants` (all tenants with work if None) until `stop()`.

    `services`: a `graphmem.services.Services`. Settings used: job_lease_s, job_max_attempts, job_backoff_s,
    job_backoff_max_s, worker_poll_s, worker_batch (each overridable here); disambiguation_prompt,
    disambiguation_min_similarity, disambiguation_max_candidates (the LLM disambiguator).
    """

    def __init__(self, services, *, tenants: list[str] | None = None, worker_id: str | None = None,
                 concurrency: int = 1, batch: int | None = None, lease_s: float | None = None,
                 poll_s: float | None = None, grace_s: float = 10.0):
        s = services.settings
        self.services = services
        self.ingest = services.ingest
        self.db = services.db
        self.tenants = list(tenants) if tenants else None
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.concurrency = max(1, concurrency)
        self.batch = batch or s.worker_batch
        self.lease_s = lease_s or s.job_lease_s
        self.poll_s = poll_s or s.worker_poll_s
        self.grace_s = grace_s
        self.processed = 0
        self._stop = threading.Event()
        self._held: dict[str, Claim] = {}            # claim key -> claim (claimed, not finished)
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._rr = 0
        self._touched: set[str] = set()
        self._disambiguator: Disambiguator | None = None
        self.history: deque[tuple[str, str]] = deque(maxlen=10_000)  # (episode_id, end status), latest last

    # ---- lifecycle ------------------------------------------------------------------------------
    def start(self) -> "Worker":
        """Start the processing threads and the lease heartbeat in the background."""
        self._stop.clear()
        # the scan for nodes without vectors reads the whole graph: off the caller's (the API's start-up) path
        threading.Thread(target=self._seed_backfill, name="worker-backfill-scan", daemon=True).start()
        self._threads = [threading.Thread(target=self._loop, name=f"worker-{i}", daemon=True)
                         for i in range(self.concurrency)]
        self._threads.append(threading.Thread(target=self._heartbeat, name="worker-heartbeat", daemon=True))
        for t in self._threads:
            t.start()
        return self

    def stop(self, grace_s: float | None = None) -> int:
        """Stop claiming, wait up to `grace_s` seconds for jobs in progress, release every job still held (back to
        pending, the attempt not counted). Returns how many jobs were released."""
        self._stop.set()
        deadline = time.monotonic() + (self.grace_s if grace_s is None else grace_s)
        for t in self._threads:
            t.join(timeout=max(0.0, deadline - time.monotonic()))
        with self._lock:
            held = list(self._held.values())
            self._held.clear()
        released = 0
        for c in held:
            try:
                if self.db.write(lambda tx, c=c: jobs.finish(tx, c, "pending", reason="released at worker shutdown",
                                                              attempts_delta=-1)):
                    released += 1
            except Exception as exc:  # the lease will expire instead
                log.warning("could not release job %s: %s", c.episode.id, exc)
        return released

    def request_stop(self) -> None:
        """Ask the loops to stop (safe from a signal handler); `stop()` then waits and releases."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def run(self, *, until_idle: bool = False, max_seconds: float | None = None) -> int:
        """Process in the foreground (may be called again after it returns). `until_idle`: return once a claim round
        finds nothing. Returns the jobs processed by this worker so far."""
        self._stop.clear()
        self._seed_backfill()
        hb = threading.Thread(target=self._heartbeat, daemon=True)
        hb.start()
        start = time.monotonic()
        try:
            while not self._stop.is_set():
                n = self.run_once()
                if n == 0:
                    if until_idle:
                        break
                    self._stop.wait(self.poll_s)
                if max_seconds is not None and time.monotonic() - start > max_seconds:
                    break
        finally:
            if not self._stop.is_set():
                self._stop.set()
                self.stop(grace_s=0)
        return self.processed

    def run_once(self) -> int:
        """One round: claim up to `batch` jobs of one tenant (round-robin) and process them in the order their
        episodes happened (occurred_at, then arrival), so that identities and values are learned in world order
        whatever order the claim returned. Returns how many."""
        claims = sorted(self._claim(), key=lambda c: (c.episode.occurred_at, c.episode.ingested_at, c.episode.id))
        for c in claims:
            if self._stop.is_set():
                break
            self.process(c)
        self._backfill()
        return len(claims)

    # ---- claiming ---------------------------------------------------------------------------------
    def _claim(self) -> list[Claim]:
        tenants = self.tenants if self.tenants is not None else jobs.tenants_with_work(self.db)
        for _ in range(len(tenants)):
            with self._lock:
                tenant = tenants[self._rr % len(tenants)]
                self._rr += 1
            claims = jobs.claim(self.db, tenant, self.worker_id, self.batch, self.lease_s)
            if claims:
                with self._lock:
                    for c in claims:
                        self._held[c.token + c.episode.id] = c
                return claims
        return []

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                if self.run_once() == 0:
                    self._stop.wait(self.poll_s)
            except Exception as exc:  # Neo4j down, etc.: keep the worker alive
                log.warning("worker round failed: %s", exc)
                self._stop.wait(self.poll_s)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.lease_s / 3):
            with self._lock:
                by_tenant: dict[str, list[Claim]] = defaultdict(list)
                for c in self._held.values():
                    by_tenant[c.tenant_id].append(c)
            for tenant, cs in by_tenant.items():
                try:
                    jobs.renew(self.db, tenant, cs, self.lease_s)
                except Exception as exc:
                    log.warning("lease renewal failed for %d jobs: %s", len(cs), exc)

    # ---- processing -------------------------------------------------------------------------------
    def process(self, claim: Claim) -> str:
        """Run one claimed job to an end state; returns it ("done", "skipped", "failed", "dead", "pending", or
        "lost" when another worker took it over)."""
        s = self.services.settings
        ep = claim.episode
        status = "lost"
        extracted = Extracted(extractor="none")
        try:
            if claim.attempt > s.job_max_attempts:
                status = self._end(claim, "dead", f"gave up after {claim.attempt - 1} attempts "
                                   "(the worker holding it stopped without finishing)", extracted)
                return status
            if is_text(ep) and self.ingest.extractor() is None:
                status = self._end(claim, "skipped", "no LLM configured", extracted)
                return status
            self._extract(claim, extracted)
            status = self._commit(claim, extracted)
            return status
        except LeaseLost:
            return "lost"
        except PastRetention:
            status = self._end(claim, "pending", PAST_RETENTION, extracted, attempts_delta=-1)
            return status
        except (PermanentFailure, ExtractionMalformed, LLMRejected, MappingError, InvalidInput, NotFound,
                EmailTaken) as exc:
            detail = exc.detail if isinstance(exc, GraphmemError) else str(exc)
            status = self._end(claim, "failed", f"{type(exc).__name__}: {detail}"[:1000], extracted)
            return status
        except Exception as exc:  # transient: LLM unavailable, Neo4j errors
            reason = f"{type(exc).__name__}: {exc}"[:1000]
            if claim.attempt >= s.job_max_attempts:
                status = self._end(claim, "dead", f"dead after {claim.attempt} attempts; last error: {reason}",
                                   extracted)
            else:
                delay = jobs.backoff_s(claim.attempt, s.job_backoff_s, s.job_backoff_max_s)
                status = self._end(claim, "pending", reason, extracted,
                                   not_before=utcnow() + timedelta(seconds=delay))
            if not isinstance(exc, LLMUnavailable):
                log.warning("job %s attempt %d failed: %s", ep.id, claim.attempt, reason)
            return status
        finally:
            with self._lock:
                self._held.pop(claim.token + ep.id, None)
            if status != "lost":
                self.processed += 1
                self.history.append((ep.id, status))
                self._touched.add(claim.tenant_id)

    def _retained(self, claim: Claim) -> Callable[[], None]:
        """The check to run right before each LLM request that carries the claim's content (`before_send`): it
        raises `PastRetention` unless the episode is still within retention (`jobs.retained`). The claim skips such
        episodes, but time passes after it, during a call and the waits before its retries."""
        def check() -> None:
            if not jobs.retained(self.db, claim.tenant_id, claim.episode.id):
                raise PastRetention(claim.episode.id)
        return check

    def _extract(self, claim: Claim, out: Extracted) -> None:
        ep = claim.episode
        if not is_text(ep):   # a JSON record (kind json, or an event holding one): the mapping
            out.extractor = f"mapping:{self.ingest.mapping.name}"
            mapped = map_extract(self.ingest.mapping, ep)
            out.entities, out.facts, out.retractions = mapped.entities, mapped.facts, mapped.retractions
            out.partials = mapped.partials
            return
        ontology = self.ingest.graph.ontology(claim.tenant_id)
        self.ingest.extractor().extract(claim.tenant_id, ep, ontology, out, before_send=self._retained(claim))

    def disambiguator(self) -> Disambiguator:
        """The LLM disambiguator (built once, sharing the extractor's client and its concurrency bound)."""
        if self._disambiguator is None:
            self._disambiguator = Disambiguator(self.ingest.extractor().client, self.services.settings)
        return self._disambiguator

    def _commit(self, claim: Claim, x: Extracted) -> str:
        """Screen `x` under the write policy, link the LLM path's ambiguous mentions (outside the transaction),
        write it all and mark the job done in one transaction (`graphmem.ingest.apply`), then index the new facts."""
        settings = self.services.settings
        graph = self.ingest.graph
        ontology = graph.ontology(claim.tenant_id)
        screened = screen_extraction(x, settings, ontology, claim.episode.id)
        extra: dict = {}
        if x.extractor == "llm" and screened.facts:
            # the disambiguation call sends the content again: each of its requests looks at retention first
            d = self.disambiguator().apply(self.db, claim.tenant_id, claim.episode, screened.facts, x.usage,
                                           before_send=self._retained(claim))
            screened.facts = d.facts
            if d.mentions:
                extra = {"disambiguation_prompt_version": self.disambiguator().prompt_version,
                         "disambiguation_mentions": len(d.mentions),
                         "disambiguation_linked": sum(1 for v in d.chosen.values() if v)}
            if d.fallback_reason:
                x.notes.append(d.fallback_reason)
                log.warning("job %s: %s", claim.episode.id, d.fallback_reason)
        stats = {**self._stats_by(x, len(screened.facts), len(screened.refusals)), **extra}
        outcomes = apply_extraction(self.db, claim, x, screened, settings, ontology, stats=stats)
        if graph.indexer:
            graph.indexer.index_facts(claim.tenant_id, [o.fact_id for o in outcomes
                                                        if o.fact_id and o.action != "duplicate"])
        return "done"

    @staticmethod
    def _stats(x: Extracted, asserted: int, refused: int) -> dict:
        return {"extractor": x.extractor, "extraction_prompt_version": x.prompt_version,
                "facts_asserted": asserted, "facts_refused": refused}

    def _stats_by(self, x: Extracted, asserted: int, refused: int) -> dict:
        return {**self._stats(x, asserted, refused), "processed_by": self.worker_id}

    def _end(self, claim: Claim, status: str, reason: str | None, x: Extracted, not_before=None,
             attempts_delta: int = 0) -> str:
        if not self.db.write(lambda tx: jobs.finish(tx, claim, status, reason=reason, not_before=not_before,
                                                    attempts_delta=attempts_delta, usage=x.usage,
                                                    stats=self._stats_by(x, 0, 0))):
            return "lost"
        return status

    def _seed_backfill(self) -> None:
        """With an embedder configured, queue for `_backfill` every tenant (of this worker's) that holds facts,
        entities or episodes without a vector: turning an embedder on for a graph written without one embeds what
        is stored, in the background. One scan of the graph per start (meta/unembedded_tenants)."""
        if self.services.embedder is None:
            return
        try:
            found = {r["tenant_id"] for r in self.db.rows("meta/unembedded_tenants")}
        except Exception as exc:  # Neo4j down at start: writes still queue their tenants
            log.warning("could not look for nodes without vectors: %s", exc)
            return
        with self._lock:
            queued = [t for t in found if self.tenants is None or t in self.tenants]
            self._touched.update(queued)
        if queued:
            log.info("embedding what is stored without vectors in %d tenant(s), in the background", len(queued))

    def _backfill(self) -> None:
        """Embed what is still missing for tenants this worker touched or found at start (when an embedder is
        configured), `Indexer.backfill`'s batch per kind and tenant each round; a tenant stays queued while a round
        stores vectors, so a large tenant is finished over the next rounds."""
        with self._lock:
            tenants, embedder = list(self._touched), self.services.embedder
            self._touched.clear()
        if not tenants or embedder is None:
            return
        indexer = Indexer(self.db, embedder)
        more = [t for t in tenants if indexer.backfill(t) > 0]
        with self._lock:
            self._touched.update(more)
