"""`Worker`: claims extraction jobs, runs the extractor, writes the facts, retries, dead-letters, resumes.

One job is one episode (see `graphmem.ingest.jobs`). For each claimed job the worker picks the extractor by kind
(json/event: the declarative mapping; message/text/tool_result: the LLM, or "skipped: no LLM configured"), applies
the write policy, sends the LLM path's ambiguous entity mentions to the LLM in one disambiguation call
(`graphmem.ingest.disambiguate`; on failure the deterministic resolver decides and the reason is recorded on the done
job), then in ONE transaction checks it still holds the claim (`jobs/fence`), asserts the facts through the core
(`graphmem.store.facts.assert_batch`: entity resolution, supersession) and applies the mapping's retractions (CRM
fields set to null, and the previous subject displaced by an "exclusive" fact such as a deal's new owner:
`graphmem.store.facts.retract`, in record order with the facts), records refusals and marks the job done. A crash anywhere before that commit leaves the job running with a lease that expires, after which any worker
claims it again: facts are written exactly once. Transient errors (LLM down, Neo4j) retry with exponential backoff
(`jobs.backoff_s`); after `settings.job_max_attempts` attempts the job is "dead" with the reason; permanent errors
(malformed output after repair, unmappable JSON, a rejected request) end it "failed" with the reason.

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
from bisect import bisect_left
from collections import defaultdict, deque
from datetime import timedelta

from graphmem.errors import GraphmemError, InvalidInput, NotFound
from graphmem.indexer import Indexer
from graphmem.ingest import jobs, refusals
from graphmem.ingest.disambiguate import Disambiguator
from graphmem.ingest.extract_llm import Extracted, ExtractionMalformed
from graphmem.ingest.jobs import Claim
from graphmem.ingest.llm import LLMRejected, LLMUnavailable
from graphmem.ingest.mapping import MappingError, Retraction, extract as map_extract
from graphmem.ingest.policy import TEXT_KINDS, screen_entities, screen_facts
from graphmem.models import EntityRef, FactIn
from graphmem.store import entities as entity_store
from graphmem.store import facts as fact_store
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.worker")


class LeaseLost(Exception):
    """Another worker took the job over (this worker's lease expired); nothing was written."""


class PermanentFailure(Exception):
    """The job cannot succeed by retrying (its reason is recorded, status "failed")."""


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
            if ep.kind in TEXT_KINDS and self.ingest.extractor() is None:
                status = self._end(claim, "skipped", "no LLM configured", extracted)
                return status
            self._extract(claim, extracted)
            status = self._commit(claim, extracted)
            return status
        except LeaseLost:
            return "lost"
        except (PermanentFailure, ExtractionMalformed, LLMRejected, MappingError, InvalidInput, NotFound) as exc:
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

    def _extract(self, claim: Claim, out: Extracted) -> None:
        ep = claim.episode
        if ep.kind in ("json", "event"):
            out.extractor = f"mapping:{self.ingest.mapping.name}"
            mapped = map_extract(self.ingest.mapping, ep)
            out.entities, out.facts, out.retractions = mapped.entities, mapped.facts, mapped.retractions
            return
        self.ingest.extractor().extract(claim.tenant_id, ep, self.ingest.graph.ontology(claim.tenant_id), out)

    def disambiguator(self) -> Disambiguator:
        """The LLM disambiguator (built once, sharing the extractor's client and its concurrency bound)."""
        if self._disambiguator is None:
            self._disambiguator = Disambiguator(self.ingest.extractor().client, self.services.settings)
        return self._disambiguator

    def _commit(self, claim: Claim, x: Extracted) -> str:
        settings = self.services.settings
        graph = self.ingest.graph
        ontology = graph.ontology(claim.tenant_id)
        ok, refused = screen_facts(x.facts, settings, ontology, prefix="extraction.facts")
        facts = [x.facts[i] for i in ok]
        # where each retraction falls among the facts that passed the policy (record order is kept)
        # (an exclusive fact's displacement goes with its fact: dropped when the policy refused the fact)
        passed = set(ok)
        gone = sorted(((bisect_left(ok, r.position), i, r) for i, r in enumerate(x.retractions)
                       if not r.exclusive or r.position in passed), key=lambda t: (t[0], t[1]))
        extra: dict = {}
        if x.extractor == "llm" and facts:
            d = self.disambiguator().apply(self.db, claim.tenant_id, claim.episode, facts, x.usage)
            facts = d.facts
            if d.mentions:
                extra = {"disambiguation_prompt_version": self.disambiguator().prompt_version,
                         "disambiguation_mentions": len(d.mentions),
                         "disambiguation_linked": sum(1 for v in d.chosen.values() if v)}
            if d.fallback_reason:
                x.notes.append(d.fallback_reason)
                log.warning("job %s: %s", claim.episode.id, d.fallback_reason)
        entities, bad_entities = screen_entities(x.entities, claim.episode.id, "extraction.entities")
        refusal_list = x.refusals + [r for _, r in refused] + bad_entities

        def work(tx):
            if not jobs.holds(tx, claim):
                raise LeaseLost()
            if entities:
                entity_store.resolve(tx, claim.tenant_id, entities, settings,
                                     [f"extraction.entities[{i}]" for i in range(len(entities))])
            plain = [(k, i, r) for k, (_, i, r) in enumerate(gone) if not r.exclusive]
            targets: dict[int, str] = {}
            if plain:
                briefs = entity_store.resolve(tx, claim.tenant_id, [r.subject or r.object for _, _, r in plain],
                                              settings, [f"extraction.retractions[{i}]" for _, i, _ in plain])
                targets = {k: b.id for (k, _, _), b in zip(plain, briefs)}
            todo = list(facts)      # a copy: the driver may run `work` again after a transient error
            outcomes, retracted, done_upto = [], 0, 0
            for k, (pos, _, r) in enumerate(gone):
                outcomes += self._assert(tx, claim, todo[done_upto:pos], done_upto, ontology)
                done_upto = pos
                if not r.exclusive:
                    retracted += len(self._retract(tx, claim, r, targets[k]))
                    continue
                # an exclusive fact (a deal's new owner): fit it among the object's other subjects, assert it,
                # then close the subjects it displaces
                todo[pos], displaced = self._exclusive(tx, claim, r, todo[pos], pos)
                outcomes += self._assert(tx, claim, todo[pos:pos + 1], pos, ontology)
                done_upto = pos + 1
                retracted += len(self._displace(tx, claim, r, todo[pos].object.id, displaced))
            outcomes += self._assert(tx, claim, todo[done_upto:], done_upto, ontology)
            refusals.record_tx(tx, claim.tenant_id, refusal_list)
            stats = {**self._stats_by(x, len(facts), len(refusal_list)), **extra}
            if x.retractions:
                stats["facts_retracted"] = retracted
            jobs.finish(tx, claim, "done", reason="; ".join(x.notes)[:1000] or None, usage=x.usage, stats=stats)
            return outcomes
        outcomes = self.db.write(work)
        if graph.indexer:
            graph.indexer.index_facts(claim.tenant_id, [o.fact_id for o in outcomes
                                                        if o.fact_id and o.action != "duplicate"])
        return "done"

    def _assert(self, tx, claim: Claim, facts: list, offset: int, ontology) -> list:
        """Assert `facts` (the slice starting at `offset` of the job's facts) in chunks of `bulk_batch_size`;
        one `AssertOutcome` per fact."""
        settings = self.services.settings
        out = []
        size = settings.bulk_batch_size
        for start in range(0, len(facts), size):
            out += fact_store.assert_batch(tx, claim.tenant_id, facts[start:start + size], ontology, settings,
                                           field_prefix="extraction.facts")
        return out

    @staticmethod
    def _retract(tx, claim: Claim, r: Retraction, entity_id: str) -> list[str]:
        """Apply one retraction; returns the closed fact ids (none when nothing was valid at `r.at`: a no-op)."""
        tenant = claim.tenant_id
        if r.subject is not None:
            pairs = [(entity_id, None)]
        else:   # the nulled field named the subject: close the facts of r.predicate pointing at the entity
            about = fact_store.about(tx, tenant, entity_id, as_of=r.at, predicates=[r.predicate])
            pairs = sorted({(f.subject_id, f"e:{entity_id}") for f in about if f.object_id == entity_id})
        closed: list[str] = []
        for subject_id, object_key in pairs:
            try:
                closed += fact_store.retract(tx, tenant, subject_id, r.predicate, r.at, r.episode_id, object_key,
                                             source="system")
            except NotFound:
                pass
        return closed

    def _exclusive(self, tx, claim: Claim, r: Retraction, fact: FactIn, index: int) -> tuple[FactIn, list[str]]:
        """Prepare an "exclusive" mapped fact (e.g. a deal's new owner, valid from `r.at`) before it is asserted.

        Resolves its subject and object (the fact comes back naming both by id, so the assertion writes exactly
        what was examined), locks the object (concurrent owner changes of one deal apply one after the other) and
        reads the object's `r.predicate` facts of every subject and time. Returns the fact to assert and the ids of
        the other subjects whose fact is valid at `r.at` (to close at `r.at` once it is asserted). When the change
        arrived out of order, i.e. a fact on the object starts after `r.at` or a displaced one ended after it (a
        later owner change, or a null, that was processed first), the returned fact is given `valid_to` = the
        earliest such time: it is stored as history, closed where the later change begins, and the later owner
        stays current. Raises `InvalidInput`/`NotFound` from entity resolution (as the assertion would)."""
        tenant = claim.tenant_id
        owner, target = entity_store.resolve(tx, tenant, [fact.subject, fact.object], self.services.settings,
                                             [f"extraction.facts[{index}].subject", f"extraction.facts[{index}].object"])
        tx.rows("facts/lock_subjects", tenant_id=tenant, ids=[target.id])
        on_target = [f for f in fact_store.about(tx, tenant, target.id, include_superseded=True,
                                                 predicates=[r.predicate]) if f.object_id == target.id]
        valid_then = [f for f in on_target if f.subject_id != owner.id and f.valid_from <= r.at
                      and (f.valid_to is None or f.valid_to > r.at)]
        later = [f.valid_from for f in on_target if f.valid_from > r.at] + \
                [f.valid_to for f in valid_then if f.valid_to is not None]
        update: dict = {"subject": EntityRef(id=owner.id), "object": EntityRef(id=target.id)}
        if later and (fact.valid_to is None or fact.valid_to > min(later)):
            update["valid_to"] = min(later)
        return fact.model_copy(update=update), sorted({f.subject_id for f in valid_then})

    @staticmethod
    def _displace(tx, claim: Claim, r: Retraction, object_id: str, subject_ids: list[str]) -> list[str]:
        """Close, as of `r.at`, the `r.predicate` facts of `subject_ids` on `object_id` (the subjects an exclusive
        fact displaced) through `graphmem.store.facts.retract`: status "retracted", valid_to = `r.at`, this
        episode as provenance. A replay finds nothing valid to close (a no-op). Returns the closed fact ids."""
        closed: list[str] = []
        for subject_id in subject_ids:
            try:
                closed += fact_store.retract(tx, claim.tenant_id, subject_id, r.predicate, r.at, r.episode_id,
                                             f"e:{object_id}", source="system")
            except NotFound:
                pass
        return closed

    @staticmethod
    def _stats(x: Extracted, asserted: int, refused: int) -> dict:
        return {"extractor": x.extractor, "extraction_prompt_version": x.prompt_version,
                "facts_asserted": asserted, "facts_refused": refused}

    def _stats_by(self, x: Extracted, asserted: int, refused: int) -> dict:
        return {**self._stats(x, asserted, refused), "processed_by": self.worker_id}

    def _end(self, claim: Claim, status: str, reason: str | None, x: Extracted, not_before=None) -> str:
        if not self.db.write(lambda tx: jobs.finish(tx, claim, status, reason=reason, not_before=not_before,
                                                    usage=x.usage, stats=self._stats_by(x, 0, 0))):
            return "lost"
        return status

    def _backfill(self) -> None:
        """Embed what is still missing for tenants this worker touched (when an embedder is configured)."""
        if not self._touched or self.services.embedder is None:
            self._touched.clear()
            return
        indexer = Indexer(self.db, self.services.embedder)
        for tenant in list(self._touched):
            indexer.backfill(tenant)
        self._touched.clear()
