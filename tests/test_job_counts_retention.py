"""The tenant's job counts and LLM usage (`IngestService.job_counts`, `llm_usage`; `graphmem.ingest.jobs.counts`,
`usage`) leave out the jobs of episodes past retention, their own or their session's, as the claim and every read of
a job do. Real Neo4j; the passage of time and the LLM usage a worker would record are test-only raw writes."""
from __future__ import annotations

from datetime import datetime, timezone

from graphmem.governance.models import RetentionSettings
from graphmem.models import EpisodeIn

UTC = timezone.utc
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def test_job_counts_and_usage_leave_out_jobs_past_retention(make_services, db, tenant):
    services = make_services()
    services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    stored = services.ingest.append_episodes(tenant, [
        EpisodeIn(content=f"Dana told me about the walrus order number {i} today", occurred_at=T0, idempotency_key=f"k{i}", session_id=session)
        for i, session in enumerate([None, None, "idle"])])
    own, live, idle = (e.id for e, _ in stored)
    with db.driver.session() as s:   # what an extraction's LLM calls record on each job
        s.run("MATCH (e:Episode {tenant_id: $t}) SET e.llm_calls = 2, e.llm_prompt_tokens = 100, "
              "e.llm_completion_tokens = 10, e.llm_cost_usd = 0.5", t=tenant)
    status = services.ingest.job_status(tenant, live).status
    assert services.ingest.job_counts(tenant) == {status: 3}
    assert services.ingest.llm_usage(tenant) == {"jobs": 3, "llm_calls": 6, "prompt_tokens": 300,
                                                 "completion_tokens": 30, "cost_usd": 1.5}
    with db.driver.session() as s:   # "own" passes its own retention, the session "idle" its idle TTL
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own, t=datetime(2020, 1, 1, tzinfo=UTC))
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    assert services.ingest.job_counts(tenant) == {status: 1}
    assert services.ingest.llm_usage(tenant) == {"jobs": 1, "llm_calls": 2, "prompt_tokens": 100,
                                                 "completion_tokens": 10, "cost_usd": 0.5}
