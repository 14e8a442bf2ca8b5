"""`IngestService`: episode intake under the write policy, explicit facts, refusals and job inspection.

Built by `build(services)` (registered as `services.ingest`). The turn API and the HTTP episode routes call
`append_episodes`; the `Worker` (graphmem/ingest/worker.py) does the extraction.
"""
from __future__ import annotations

from graphmem.errors import Conflict, InvalidInput
from graphmem.ingest import jobs, refusals
from graphmem.ingest.extract_llm import LLMExtractor
from graphmem.ingest.llm import ChatClient
from graphmem.ingest.mapping import Mapping
from graphmem.ingest.policy import PolicyRefusal, initial_status, redact_episode, screen_facts
from graphmem.models import AssertOutcome, Episode, EpisodeIn, FactIn
from graphmem.store import episodes as episode_store
from graphmem.store import require_tenant
from graphmem.timeutil import utcnow


class IngestService:
    """Episode intake and explicit facts. Every method takes `tenant_id` first (`TenantRequired` if missing)."""

    def __init__(self, services):
        self.services = services
        self.settings = services.settings
        self.db = services.db
        self.mapping = Mapping.load(self.settings.crm_mapping_path)
        self._extractor: LLMExtractor | None = None

    @property
    def graph(self):
        return self.services.graph

    @property
    def llm_configured(self) -> bool:
        """True when an LLM endpoint or key is configured (`GRAPHMEM_LLM_BASE_URL` / `GRAPHMEM_LLM_API_KEY`)."""
        return self.settings.llm_configured

    def extractor(self) -> LLMExtractor | None:
        """The LLM extractor (built once), or None when no LLM is configured."""
        if self._extractor is None and self.llm_configured:
            self._extractor = LLMExtractor(ChatClient(self.settings), self.settings.extraction_prompt)
        return self._extractor

    # ---- episodes ------------------------------------------------------------------------------
    def append_episodes(self, tenant_id: str, episodes: list[EpisodeIn], *, agent_id: str | None = None,
                        extract: bool = True, batch: bool = True, searchable: bool = True,
                        expire_idle: bool = True) -> list[tuple[Episode, bool]]:
        """Store episodes (secrets redacted first), each with a durable extraction job; returns (episode, created)
        per input, in order. Idempotent by `idempotency_key` (a replay returns the stored episode, created False).

        Returns after every episode is committed; each episode is one transaction holding the episode, its job (and
        the reason when it ended at intake) and the refusal recorded when secrets were redacted. Status: "pending" (the job), or "skipped" with reason
        "chatter" when the chatter gate applies, or with reason "explicit facts" when `extract` is false (an episode
        that records a caller's explicit facts: nothing is left to extract). With `searchable` false search never
        returns the episodes (the record of an API write, which says only which call by which key wrote the facts;
        it stays their provenance; `graphmem.store.episodes.append`). Raises `TenantRequired`; `InvalidInput` naming
        `episodes[i].content` when content is over `settings.max_episode_chars`, `episodes[i].idempotency_key` when
        two episodes of the batch share a key with different content, when the key already names another stored
        episode, and `episodes[i].user_id` when the session belongs to another user (all checked before any write,
        `graphmem.store.episodes.batch_conflict`: a refused batch stores nothing); `Conflict` naming
        `episodes[i].session_id` when the first episode of a session names one past retention but kept under a legal
        hold, and `episodes[i].idempotency_key` when the key is taken by an episode past retention kept under a legal
        hold (nothing written). With `batch` false (one episode sent on its own) the fields are named without the
        `episodes[0].` prefix. The episodes of one call share one
        `ingested_at` (a turn's episodes arrived together: `graphmem.context.compaction` keeps them raw together).
        A session the episodes name that is past the tenant's session TTL is expired first, as the sweeper would
        (`Sweeper.expire_idle_sessions`): the episodes start it afresh instead of reviving its old content
        (`expire_idle` false: the caller did that already). An episode stored under a key sent again whose own
        retention has passed (gone to every read) is expired, as the sweeper would (`Sweeper.expire_episodes`), in
        the transaction that stores the one sent as new (created True, a new id, its own extraction job): it is
        never replayed, and other content under its key is no conflict.
        """
        require_tenant(tenant_id)
        if expire_idle:
            named = {}   # a batch names the first item of each session: `episodes[1].session_id`
            for i, e in enumerate(episodes if batch else ()):
                named.setdefault(e.session_id, f"episodes[{i}].session_id")
            self.services.governance.sweeper.expire_idle_sessions(tenant_id, [e.session_id for e in episodes],
                                                                  fields=named)
        cleaned = self._checked(tenant_id, episodes, batch, conflicts=len(episodes) > 1)
        out: list[tuple[Episode, bool]] = []
        arrived = utcnow()
        sweeper = self.services.governance.sweeper

        def expire(tx, ids: list[str]) -> dict[str, int]:
            return sweeper.expire_episodes(tx, tenant_id, ids, arrived)
        for i, (clean, kinds) in enumerate(cleaned):
            status, reason = initial_status(clean, self.settings) if extract else ("skipped", jobs.EXPLICIT_FACTS)
            try:
                out.append(self.graph.append_episode(tenant_id, clean, extraction_status=status, agent_id=agent_id,
                                                     extraction_reason=reason, searchable=searchable,
                                                     on_created=_record_redaction(tenant_id, kinds) if kinds else None,
                                                     ingested_at=arrived, expire=expire))
            except (InvalidInput, Conflict) as exc:
                if not batch:
                    raise
                raise exc.under(f"episodes[{i}].") from None
        return out

    def check_episodes(self, tenant_id: str, episodes: list[EpisodeIn]) -> None:
        """Every check `append_episodes` makes before it writes (content size, keys within the batch, keys and
        session owners already stored), without writing: for callers that write something else first (a turn
        creates its session). Raises as `append_episodes` does, fields prefixed `episodes[i].`."""
        self._checked(tenant_id, episodes, True, conflicts=True)

    def _checked(self, tenant_id: str, episodes: list[EpisodeIn], batch: bool,
                 conflicts: bool) -> list[tuple[EpisodeIn, tuple[str, ...]]]:
        """The episodes redacted, after the checks; `conflicts` also reads the stored keys and session owners (a
        single episode's are checked by its own write transaction)."""
        require_tenant(tenant_id)
        limit = self.settings.max_episode_chars
        seen: dict[str, EpisodeIn] = {}
        for i, ep in enumerate(episodes):
            at = f"episodes[{i}]." if batch else ""
            if len(ep.content) > limit:
                raise InvalidInput(f"{at}content is {len(ep.content)} characters; the limit is {limit}",
                                   field=f"{at}content")
            if ep.idempotency_key:
                first = seen.setdefault(ep.idempotency_key, ep)
                if episode_store.identity(first) != episode_store.identity(ep):
                    raise InvalidInput(f"{at}idempotency_key {ep.idempotency_key!r} is used by an earlier "
                                       "episode of the batch with other content", field=f"{at}idempotency_key")
        cleaned = [redact_episode(ep) for ep in episodes]
        if conflicts:
            conflict = self.db.read(lambda tx: episode_store.batch_conflict(tx, tenant_id, [c for c, _ in cleaned]))
            if conflict:
                i, exc = conflict
                raise exc.under(f"episodes[{i}]." if batch else "") from None
        return cleaned

    def append_episode(self, tenant_id: str, episode: EpisodeIn, *, agent_id: str | None = None) -> tuple[Episode, bool]:
        """One episode; see `append_episodes`."""
        return self.append_episodes(tenant_id, [episode], agent_id=agent_id, batch=False)[0]

    # ---- explicit facts --------------------------------------------------------------------------
    def assert_facts(self, tenant_id: str, facts: list[FactIn]) -> list[AssertOutcome]:
        """Assert caller-sent facts (each with its `episode_id`) under the write policy, one outcome per fact.

        Refused facts (secret, oversized, inferred below the confidence threshold) come back as action "rejected"
        with the reason, are recorded as refusals and are not stored; the rest go to the core in one batch
        (sensitive inferred facts come back "candidate"). Raises `InvalidInput` (missing episode_id, unknown
        predicate, wrong kinds) or `NotFound` (unknown episode or entity) naming `facts[i]...`, writing nothing.
        """
        require_tenant(tenant_id)
        for i, f in enumerate(facts):
            if not f.episode_id:
                raise InvalidInput(f"facts[{i}].episode_id: every fact needs the episode it came from",
                                   field=f"facts[{i}].episode_id")
        ok, refused = screen_facts(facts, self.settings)
        stored = self.graph.assert_facts(tenant_id, [facts[i] for i in ok]) if ok else []
        refusals.record(self.db, tenant_id, [r for _, r in refused], scope="explicit")
        out: list[AssertOutcome | None] = [None] * len(facts)
        for i, o in zip(ok, stored):
            out[i] = o
        for i, r in refused:
            out[i] = AssertOutcome(action="rejected", reason=f"{r.reason}: {r.detail}")
        return out  # type: ignore[return-value]

    # ---- refusals and jobs -----------------------------------------------------------------------
    def list_refusals(self, tenant_id: str, offset: int = 0, limit: int = 50) -> list[refusals.Refusal]:
        """The tenant's write-policy refusals, newest first."""
        require_tenant(tenant_id)
        return refusals.list_(self.db, tenant_id, offset, limit)

    def job_status(self, tenant_id: str, episode_id: str) -> jobs.Job:
        """The extraction job of an episode (`NotFound` if the tenant has no such episode)."""
        require_tenant(tenant_id)
        return jobs.get(self.db, tenant_id, episode_id)

    def failed_jobs(self, tenant_id: str, offset: int = 0, limit: int = 50) -> list[jobs.Job]:
        """Failed and dead-lettered jobs, with their reasons, most recent first."""
        require_tenant(tenant_id)
        return jobs.failed(self.db, tenant_id, offset, limit)

    def retry_job(self, tenant_id: str, episode_id: str) -> jobs.Job:
        """Re-queue a failed, dead or skipped job (`NotFound`; `Conflict` if pending, running or done)."""
        require_tenant(tenant_id)
        return jobs.retry(self.db, tenant_id, episode_id)

    def job_counts(self, tenant_id: str) -> dict[str, int]:
        """Jobs per status ({status: jobs}); none of an episode past retention (`graphmem.ingest.jobs.counts`)."""
        require_tenant(tenant_id)
        return jobs.counts(self.db, tenant_id)

    def llm_usage(self, tenant_id: str) -> dict[str, float]:
        """The tenant's extraction LLM usage (calls, tokens, cost in USD), summed over its jobs; none of an episode
        past retention (`graphmem.ingest.jobs.usage`)."""
        require_tenant(tenant_id)
        return jobs.usage(self.db, tenant_id)


def _record_redaction(tenant_id: str, kinds: tuple[str, ...]):
    """An `on_created` hook recording that secrets were redacted from the episode, in the episode's own transaction."""
    def record(tx, stored: Episode) -> None:
        refusals.record_tx(tx, tenant_id, [PolicyRefusal(
            "secret_redacted", "content", f"secrets redacted before storing: {', '.join(kinds)}", stored.id)])
    return record


def build(services) -> IngestService:
    """`Services` factory."""
    return IngestService(services)
