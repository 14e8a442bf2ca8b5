"""Durable extraction jobs on the real Neo4j: atomic claims (threads and processes), crash-resume after SIGKILL,
graceful release, a lost lease writes nothing, and job inspection."""
from __future__ import annotations

import json
import signal
import threading
import time
from collections import Counter
from datetime import datetime, timedelta, timezone

from graphmem.ingest import jobs
from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.fake_openai import Reply, chat_completion_body
from tests.ingest_fixture import worker_process, worker_summary

UTC = timezone.utc
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def contacts(services, tenant, n, prefix="c"):
    """n CRM contact records (2 facts each: WORKS_AT, HAS_TITLE) as pending json episodes."""
    eps = [EpisodeIn(kind="json", occurred_at=T0 + timedelta(minutes=i), idempotency_key=f"{prefix}-{i}",
                     content=json.dumps({"object": "contact", "id": f"{prefix}-{i}", "name": f"Person {prefix} {i}",
                                         "email": f"p{i}@{prefix}.example.com", "company": f"Org {i % 7}",
                                         "title": "Engineer", "changed_at": (T0 + timedelta(minutes=i)).isoformat()}))
           for i in range(n)]
    return [e for e, _ in services.ingest.append_episodes(tenant, eps)]


def counts(db, tenant):
    with db.driver.session() as s:
        return s.run("MATCH (f:Fact {tenant_id: $t}) OPTIONAL MATCH (f)-[d:DERIVED_FROM]->() "
                     "RETURN count(DISTINCT f) AS facts, count(d) AS prov", t=tenant).single().data()


def test_concurrent_claims_never_share_a_job(make_services, tenant):
    services = make_services()
    eps = contacts(services, tenant, 60)
    claimed: list[list[str]] = []
    barrier = threading.Barrier(6)

    def claimer(i):
        barrier.wait()
        mine = []
        while True:
            got = jobs.claim(services.db, tenant, f"w{i}", 4, 60)
            if not got:
                break
            mine += [c.episode.id for c in got]
        claimed.append(mine)
    threads = [threading.Thread(target=claimer, args=(i,)) for i in range(6)]
    [t.start() for t in threads]
    [t.join(60) for t in threads]
    every = [e for mine in claimed for e in mine]
    assert Counter(every).most_common(1)[0][1] == 1           # no job claimed twice
    assert sorted(every) == sorted(e.id for e in eps)          # and none missed
    assert sum(1 for mine in claimed if mine) >= 2             # the claimers really competed


def blocked_claims(db) -> int:
    """How many claim queries wait for a lock right now (test-only: SHOW TRANSACTIONS)."""
    with db.driver.session(database=db.database) as s:
        return sum(1 for r in s.run("SHOW TRANSACTIONS YIELD currentQuery, status")
                   if "e._claim_lock = true" in (r["currentQuery"] or "") and r["status"].startswith("Blocked"))


def test_two_worker_processes_process_every_job_exactly_once(make_services, db, tenant):
    services = make_services()
    eps = contacts(services, tenant, 80)
    # Both workers must take part, whichever process starts first: the jobs are write-locked by an open transaction
    # until both workers' first claims wait on that lock, then released (a worker that started a few seconds late
    # on a loaded machine found the other had done all 80 and processed none)
    with db.driver.session(database=db.database) as gate_session:
        gate = gate_session.begin_transaction()
        gate.run("MATCH (e:Episode {tenant_id: $t}) SET e._gate = true", t=tenant).consume()
        procs = [worker_process(tenant, "--until-idle", "--batch", "2", "--poll-s", "0.05") for _ in range(2)]
        deadline = time.monotonic() + 120
        while blocked_claims(db) < 2:
            assert time.monotonic() < deadline, "the two workers' claims never both waited on the gate"
            assert all(p.poll() is None for p in procs), [p.stderr.read() for p in procs if p.poll() is not None]
            time.sleep(0.05)
        gate.rollback()
    summaries = [worker_summary(p) for p in procs]
    done = [j["episode_id"] for s in summaries for j in s["jobs"]]
    assert sorted(done) == sorted(e.id for e in eps)           # every job once, across both processes
    assert all(s["processed"] > 0 for s in summaries), summaries
    statuses = {services.ingest.job_status(tenant, e.id).status for e in eps}
    assert statuses == {"done"}
    assert {services.ingest.job_status(tenant, e.id).attempts for e in eps} == {1}
    assert counts(db, tenant) == {"facts": 160, "prov": 160}


def test_crash_mid_job_resumes_once_without_duplicates(make_services, fake_llm, db, tenant):
    reply = json.dumps({"entities": [{"ref": "a", "kind": "Person", "name": "Ana Lima"},
                                     {"ref": "b", "kind": "Organization", "name": "Initech"}],
                        "facts": [{"subject": "a", "predicate": "WORKS_AT", "object": "b", "confidence": 0.9},
                                  {"subject": "a", "predicate": "HAS_TITLE", "value": "CFO", "confidence": 0.9}]})
    fake_llm.script("/v1/chat/completions", Reply(200, chat_completion_body(reply), delay_s=60))  # hangs: crash here
    fake_llm.set_default("/v1/chat/completions", lambda req: Reply(200, chat_completion_body(reply)))
    services = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test")
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(content="Ana Lima is the CFO of Initech.",
                                                               occurred_at=T0, idempotency_key="crash")])[0]
    env = {"GRAPHMEM_LLM_BASE_URL": fake_llm.base_url, "GRAPHMEM_LLM_API_KEY": "test", "GRAPHMEM_LLM_TIMEOUT_S": "120"}
    proc = worker_process(tenant, "--lease-s", "2", "--poll-s", "0.05", env=env)
    deadline = time.monotonic() + 60
    while not fake_llm.requests_for("/v1/chat/completions"):
        assert time.monotonic() < deadline and proc.poll() is None, proc.stderr.read() if proc.poll() else "no call"
        time.sleep(0.05)
    job = services.ingest.job_status(tenant, ep.id)
    assert job.status == "running" and job.claimed_by
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    assert services.ingest.job_status(tenant, ep.id).status == "running"   # orphaned, lease still counting down

    restarted = worker_process(tenant, "--until-idle", "--poll-s", "0.05", env=env)
    time.sleep(2.2)                                                         # let the dead worker's lease expire
    summary = worker_summary(restarted)
    while services.ingest.job_status(tenant, ep.id).status == "running":   # it may have polled before expiry
        summary = worker_summary(worker_process(tenant, "--until-idle", env=env))
    job = services.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.attempts == 2 and job.recovered_from_crash
    assert counts(db, tenant) == {"facts": 2, "prov": 2}
    # run the queue again: nothing left to do, nothing duplicated
    assert worker_summary(worker_process(tenant, "--until-idle", env=env))["processed"] == 0
    assert counts(db, tenant) == {"facts": 2, "prov": 2}
    assert summary is not None


def test_lost_lease_writes_nothing(make_services, db, tenant):
    services = make_services()
    [ep] = contacts(services, tenant, 1)
    [stale] = jobs.claim(services.db, tenant, "slow-worker", 1, lease_s=0.2)
    time.sleep(0.3)
    [fresh] = jobs.claim(services.db, tenant, "other-worker", 1, lease_s=60)
    assert fresh.episode.id == ep.id and fresh.recovered
    slow = Worker(services, tenants=[tenant])
    assert slow.process(stale) == "lost"
    assert counts(db, tenant)["facts"] == 0
    assert Worker(services, tenants=[tenant]).process(fresh) == "done"
    assert counts(db, tenant) == {"facts": 2, "prov": 2}


def test_graceful_stop_releases_claimed_jobs(make_services, tenant):
    services = make_services()
    eps = contacts(services, tenant, 5)
    w = Worker(services, tenants=[tenant], batch=5)
    claims = w._claim()                       # claimed, not yet processed (as if stop came mid-batch)
    assert len(claims) == 5
    assert w.stop(grace_s=0) == 5
    for e in eps:
        job = services.ingest.job_status(tenant, e.id)
        assert job.status == "pending" and job.attempts == 0 and job.claimed_by is None


def test_job_inspection_errors(make_services, tenant):
    services = make_services()
    [ep] = contacts(services, tenant, 1)
    import pytest
    from graphmem.errors import Conflict, NotFound, TenantRequired
    with pytest.raises(Conflict):
        services.ingest.retry_job(tenant, ep.id)              # pending jobs are not retried
    with pytest.raises(NotFound):
        services.ingest.job_status(tenant, "nope")
    with pytest.raises(NotFound):
        services.ingest.job_status("t-other-" + tenant, ep.id)   # another tenant sees nothing
    with pytest.raises(TenantRequired):
        services.ingest.failed_jobs("", 0, 10)


def test_job_shows_retractions_and_disambiguation_through_the_service(make_services, tenant):
    """`job_status` and `failed_jobs` carry facts_retracted and the disambiguation counters; a job that never
    retracted or disambiguated shows zeros and no prompt version."""
    services = make_services()
    [pending] = contacts(services, tenant, 1, prefix="v")
    job = services.ingest.job_status(tenant, pending.id)
    assert (job.status, job.facts_retracted, job.disambiguation_mentions, job.disambiguation_linked,
            job.disambiguation_prompt_version) == ("pending", 0, 0, 0, None)
    change = {"object": "contact", "id": "v-0", "name": "Person v 0", "title": None, "phone": None,
              "changed_at": (T0 + timedelta(days=1)).isoformat()}
    bad = EpisodeIn(kind="json", occurred_at=T0, content=json.dumps({"object": "invoice"}))
    retract, failed = [e for e, _ in services.ingest.append_episodes(tenant, [
        EpisodeIn(kind="json", occurred_at=T0 + timedelta(days=1), content=json.dumps(change)), bad])]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    job = services.ingest.job_status(tenant, retract.id)
    assert (job.status, job.facts_asserted, job.facts_retracted) == ("done", 0, 1)   # the title; no phone was set
    assert job.disambiguation_mentions == 0 and job.disambiguation_prompt_version is None   # no LLM path
    [dead] = services.ingest.failed_jobs(tenant)
    assert dead.episode_id == failed.id and (dead.facts_retracted, dead.disambiguation_mentions) == (0, 0)
    assert "invoice" in dead.reason


def test_a_mapping_job_claimed_before_its_episode_passes_retention_writes_nothing(make_services, db, tenant):
    """Found by a helper: the worker looked at retention again only before LLM calls, so a JSON (CRM record) job
    claimed just before its episode passed retention (its own `retain_until`, or its session's idle TTL) still
    wrote its facts and entities, from content no read shows any more. The transaction that writes them checks
    retention first (`jobs/fence`): nothing is written, the job goes back to pending as the LLM path's does (the
    attempt not counted), and the sweeper removes the episode."""
    from graphmem.governance.models import RetentionSettings
    services = make_services()
    services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    [own] = contacts(services, tenant, 1, prefix="own")
    [idle], _ = zip(*services.ingest.append_episodes(tenant, [EpisodeIn(
        kind="json", occurred_at=T0, session_id="crm-sync", idempotency_key="idle-0",
        content=json.dumps({"object": "contact", "id": "idle-0", "name": "Person idle 0", "company": "Org idle",
                            "title": "Engineer", "changed_at": T0.isoformat()}))]))
    w = Worker(services, tenants=[tenant])
    claims = jobs.claim(db, tenant, w.worker_id, 10, 60)
    assert sorted(c.episode.id for c in claims) == sorted([own.id, idle.id])
    with db.driver.session() as s:    # then "own" passes its own retention, the session its idle TTL (raw writes)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own.id, t=datetime(2020, 1, 1, tzinfo=UTC))
        s.run("MATCH (x:Session {tenant_id: $t, id: 'crm-sync'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    assert [w.process(c) for c in claims] == ["pending", "pending"]

    assert counts(db, tenant)["facts"] == 0
    with db.driver.session() as s:
        assert s.run("MATCH (n:Entity {tenant_id: $t}) RETURN count(n) AS n", t=tenant).single()["n"] == 0
        rows = s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN e.extraction_status AS st, e.attempts AS n, "
                     "e.claim_token AS token, e.extraction_reason AS reason", ids=[own.id, idle.id]).data()
    assert [(r["st"], r["n"], r["token"]) for r in rows] == [("pending", 0, None)] * 2
    assert all("retention" in r["reason"] for r in rows), rows
    services.governance.sweep(tenant)
    with db.driver.session() as s:
        assert s.run("MATCH (e:Episode {tenant_id: $t}) RETURN count(e) AS n", t=tenant).single()["n"] == 0


def test_a_tenant_whose_only_due_jobs_are_past_retention_has_no_work(make_services, db, tenant):
    """Found by a helper: jobs/has_due and jobs/tenants_with_work had no retention condition, so a tenant whose only
    pending jobs are of episodes past retention (their own `retain_until`, or their session's idle TTL), which the
    claim never takes, kept being polled as a tenant with work (taking one of the `limit` places of the tenants an
    unscoped worker polls, and a claim round of retries each time). They apply the claim's condition."""
    from graphmem.governance.models import RetentionSettings
    services = make_services()
    services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    [own] = contacts(services, tenant, 1, prefix="own")
    [idle], _ = zip(*services.ingest.append_episodes(tenant, [EpisodeIn(
        kind="json", occurred_at=T0, session_id="crm-sync", idempotency_key="idle-0",
        content=json.dumps({"object": "contact", "id": "idle-0", "name": "Person idle 0",
                            "changed_at": T0.isoformat()}))]))

    def work() -> tuple[bool, bool]:
        due = db.one("jobs/has_due", tenant_id=tenant, now=datetime.now(UTC))["due"]
        return due, tenant in jobs.tenants_with_work(db, limit=1_000_000)

    assert work() == (True, True)
    with db.driver.session() as s:    # "own" passes its own retention (test-only raw write)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=own.id, t=datetime(2020, 1, 1, tzinfo=UTC))
    assert work() == (True, True)     # the session's episode is still live
    with db.driver.session() as s:    # and the session goes idle past its TTL
        s.run("MATCH (x:Session {tenant_id: $t, id: 'crm-sync'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    assert work() == (False, False)
    assert jobs.claim(db, tenant, "w", 10, 60) == []
    [live] = contacts(services, tenant, 1, prefix="live")
    assert work() == (True, True)
    assert [c.episode.id for c in jobs.claim(db, tenant, "w", 10, 60)] == [live.id]


def test_the_workers_backfill_embeds_no_episode_past_retention(make_services, db, tenant):
    """Found by a helper: the worker's embedding backfill (`Indexer.backfill`, cypher embeddings/backfill_candidates)
    sent the content of episodes past retention (their own `retain_until`, or their session's idle TTL), which no
    read shows and the sweeper is about to remove, to the embedder (a remote endpoint with GRAPHMEM_EMBEDDER=openai)
    and stored a vector on them; likewise a fact past its TTL. It takes only episodes within retention, as the claim
    does, and facts within theirs."""
    from graphmem.governance.models import RetentionSettings
    plain = make_services()                          # written without an embedder: no vectors yet
    plain.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    (own, _), (idle, _), (live, _) = plain.ingest.append_episodes(tenant, [
        EpisodeIn(kind="text", content=f"{name} chat about the parcel", occurred_at=T0, session_id=name)
        for name in ("own", "idle", "live")])
    kept, gone = (plain.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate=p,
                                                         value=v, episode_id=live.id)).fact_id
                  for p, v in (("HAS_TITLE", "Courier"), ("WORKING_ON", "the parcel claim")))
    with db.driver.session() as s:    # "own" passes its own retention, "idle" its session's, and a fact its TTL
        s.run("MATCH (n) WHERE n.id IN $ids SET n.retain_until = $t", ids=[own.id, gone],
              t=datetime(2020, 1, 1, tzinfo=UTC))             # (test-only raw writes)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    embedding = make_services(embedder="local")
    Worker(embedding, tenants=[tenant]).run(until_idle=True)
    with db.driver.session() as s:
        embedded = {r["id"] for r in s.run("MATCH (n) WHERE (n:Episode OR n:Fact) AND n.tenant_id = $t "
                                           "AND n.embedding IS NOT NULL RETURN n.id AS id", t=tenant)}
    assert embedded == {live.id, kept}
