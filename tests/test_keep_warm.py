"""The API runs its warm-up reads again every few seconds (`api.app.keep_warm`): Neo4j replans a cached plan once the
statistics it was made from have changed enough and 10 s have passed, and the query that finds it stale waits for
the new plan (1.2-1.4 s for the search). Found by helpers' hands-on tests: a context window right after a burst of
writes came back without its retrieved tier (search timed out after 0.30 s). On a private Neo4j, whose statistics
this test controls: it starts nearly empty and then holds 40x more facts. Whether a window's search waited for a plan
is read from Neo4j's query collector (`tests.plan_stats`), not from a timeout, so a slow or busy machine neither
fails the test nor hides a replan: the search's timeout here is generous."""
from __future__ import annotations

import logging
import threading
import time

import httpx

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.ops import WARM_UP_TENANT
from graphmem.services import Services
from tests.context_fixture import PATIENT_SEARCH
from tests.http_fixture import serve
from tests.neo4j_fixture import private_neo4j, schema_lock_held
from tests.plan_stats import collecting


def test_a_window_after_writes_that_stale_the_plans_does_not_wait_for_a_replan(tmp_path):
    with private_neo4j(tmp_path / "home") as (_, settings):
        services = Services.from_settings(settings.model_copy(update={"keep_warm_interval_s": 1.0, **PATIENT_SEARCH}))
        tenant = "keep-warm"
        _, key = services.keys.create(tenant, "agent", "test")
        services.ingest.append_episodes(tenant, [EpisodeIn(
            kind="message", content="My locker code at the Oslo office is 4471", occurred_at="2024-05-01T09:00:00Z",
            user_id="u1", role="user")], extract=False)
        body = {"query": "what is my locker code?", "budget_tokens": 2000, "user_id": "u1",
                "system_policy": "You are Acme's support agent."}
        try:
            with collecting(services.db) as stats, serve(services) as url, \
                    httpx.Client(base_url=url, timeout=60, headers={"Authorization": f"Bearer {key}"}) as c:
                def window() -> None:
                    r = c.post("/v1/sessions/s1/context", json=body)
                    assert r.status_code == 200, r.text
                    w = r.json()
                    assert [d for d in w["degraded"] if d["source"] == "search"] == [], w["degraded"]
                    assert any("4471" in p["text"] for p in w["pieces"] if p["tier"] == "retrieved"), w["text"]

                window()
                planning_s = max(stats.compile_s("search/rank", WARM_UP_TENANT))   # the start's warm-up planned it
                stats.restart()               # the collector keeps 100 calls per query: keep-warm's would fill it
                other = "keep-warm-bulk"      # 2,000 facts: the fact and entity counts grow 40x and more
                ep, _ = services.graph.append_episode(other, EpisodeIn(content="import",
                                                                       occurred_at="2024-01-01T00:00:00Z"))
                for start in range(0, 2000, 1000):
                    services.graph.assert_facts(other, [FactIn(
                        subject=EntityRef(kind="Person", name=f"Person {i}"), predicate="WORKS_AT",
                        object=EntityRef(kind="Organization", name=f"Org {i % 40}"), episode_id=ep.id)
                        for i in range(start, start + 1000)])
                time.sleep(12)                # past dbms.cypher.min_replan_interval (10 s): the plans are stale
                stats.restart()
                for _ in range(3):
                    window()
                searches = stats.compile_s("search/rank", tenant)
                assert len(searches) >= 3, searches
                # Waiting for the replan would cost about what planning cost at the start (1.2-1.4 s against
                # 1.3-2.5 s); a cached plan costs a few milliseconds.
                assert max(searches) < planning_s / 10, (searches, planning_s)
        finally:
            services.close()


WARMED = ("governance/held_expired_sessions", "sessions/window_state", "search/rank")
"""What a context window reads first, in order; the warm-up plans each (`graphmem.ops.warm_up`)."""


def test_windows_run_on_the_cached_plans_however_stale_while_a_keep_warm_runs(tmp_path):
    """The first window of a new session on a database that just grew from nothing took 0.55-0.9 s (a helper saw
    one lose its retrieved tier): it met plans the growth had staled before a keep-warm round replanned them, and
    replanned its held-session check (0.1-0.25 s) and its state read (0.3-0.5 s) itself. While a keep-warm runs,
    each read a window makes runs on its cached plan however stale (`Database.skip_replan`) and only the
    keep-warm's round replans. Here the keep-warm's rounds never come (an hour apart), so the windows' compile times
    show the plans they used, and a round run by hand afterwards shows that the plans had turned stale."""
    from api.app import keep_warm
    from graphmem import ops
    from graphmem.context.models import ContextRequest
    from graphmem.ops import WARM_UP_TENANT

    with private_neo4j(tmp_path / "home") as (_, settings):
        services = Services.from_settings(settings.model_copy(update=PATIENT_SEARCH))
        tenant = "no-replan"
        services.ingest.append_episodes(tenant, [EpisodeIn(
            kind="message", content="My locker code at the Oslo office is 4471", occurred_at="2024-05-01T09:00:00Z",
            session_id="s1", user_id="u1", role="user")], extract=False)
        ops.warm_up(services)                    # as at the start, on a nearly empty database
        stop = keep_warm(services, 3600.0)

        def window(session_id: str) -> None:
            w = services.context.assemble(tenant, session_id, ContextRequest(
                query="what is my locker code?", budget_tokens=2000, user_id="u1", system_policy="Acme support."))
            assert [d for d in w.degraded if d.source == "search"] == [], w.degraded
            assert session_id != "s1" or "4471" in w.text, w.text

        try:
            with collecting(services.db) as stats:
                window("s1")
                other = "no-replan-bulk"         # 40x the sessions, episodes, entities and facts
                services.ingest.append_episodes(other, [EpisodeIn(
                    kind="message", content=f"Note {i} about the quarterly plan", occurred_at="2024-01-01T00:00:00Z",
                    session_id=f"b{i % 40}", user_id=f"user{i % 40}") for i in range(400)], extract=False)
                ep, _ = services.graph.append_episode(other, EpisodeIn(content="import",
                                                                       occurred_at="2024-01-01T00:00:00Z"))
                services.graph.assert_facts(other, [FactIn(
                    subject=EntityRef(kind="Person", name=f"Person {i}"), predicate="WORKS_AT",
                    object=EntityRef(kind="Organization", name=f"Org {i % 40}"), episode_id=ep.id)
                    for i in range(1000)])
                time.sleep(12)                   # past dbms.cypher.min_replan_interval (10 s): the plans are stale
                stats.restart()
                window("s1")
                window("s2")                     # the first window of a new session
                windows = {name: stats.compile_s(name, tenant) for name in WARMED}
                ops.warm_up(services)            # a keep-warm round
                round_ = {name: stats.compile_s(name, WARM_UP_TENANT) for name in WARMED}
            for name in WARMED:
                assert len(windows[name]) >= 2, (name, windows)
                # a replan costs 0.1-2.5 s, a cached plan a few milliseconds
                assert max(windows[name]) < max(round_[name]) / 10, (name, windows[name], round_[name])
        finally:
            stop()
            services.close()


def test_two_keep_warms_over_one_database_each_keep_its_reads_off_replans(settings):
    """Found by a helper: the keep-warm turned `skip_replan` on and its stop turned it off, on the `Database` that
    every app over one `Services` shares, so the first keep-warm to stop left the other app's requests replanning
    stale plans themselves. The hold is counted."""
    from api.app import keep_warm
    from graphmem.store import Database

    db = Database.from_settings(settings)
    try:
        one, other = Services(db, settings), Services(db, settings)
        assert not db.skip_replan
        stop_one, stop_other = keep_warm(one, 3600.0), keep_warm(other, 3600.0)
        assert db.skip_replan
        stop_one()
        stop_one()                       # a second stop releases nothing more
        assert db.skip_replan            # the other keep-warm still runs
        stop_other()
        assert not db.skip_replan
    finally:
        db.close()


def test_a_keep_warm_round_blocked_by_neo4j_times_out_logs_and_carries_on(make_services, db, caplog):
    """Found by a helper: the keep-warm's reads ran without a timeout, so a Neo4j that never answered them hung its
    thread for good (and its stop waited 30 s for it). Here a transaction creating an index, left open, holds the
    schema lock the warm-up's search needs, so each of its reads waits for it: with
    `keep_warm_query_timeout_s` Neo4j ends the round's transaction after that long, the round logs a warning and
    the next one runs; once the lock is gone a round succeeds again, and stopping returns at once.

    The round's reads are planned first, without a timeout: a cold plan takes Neo4j seconds (tens of seconds for
    the search on a loaded 2-core machine, with the query cache cleared), past this test's short timeout, and a
    read ended while planning leaves no plan behind, so on a cold or stale cache every round after the lock went
    timed out again and the test failed waiting for "rounds back" (CI, load ~8; reproduced with
    `CALL db.clearQueryCaches()` before the test). Cached plans do not spare a round the lock: its reads still wait
    for it, as the two timed-out rounds below show."""
    from api.app import keep_warm
    from graphmem import ops

    timeout_s = 2.0
    services = make_services(keep_warm_query_timeout_s=timeout_s)
    caplog.set_level(logging.DEBUG, logger="graphmem.app")
    ops.warm_up(services)      # no timeout: plans what a round reads (and loads the embedding model) at its own pace
    holder, hold = schema_lock_held(db, "keep_warm_blocker")     # rolled back below, so no index is made
    stop = None
    try:
        others = {t for t in threading.enumerate() if t.name == "graphmem-keep-warm"}   # other tests' servers
        started = time.monotonic()
        stop = keep_warm(services, 0.05)

        def logged(text: str, deadline_s: float) -> list[logging.LogRecord]:
            deadline = time.monotonic() + deadline_s
            while time.monotonic() < deadline:
                found = [r for r in caplog.records if r.name == "graphmem.app" and text in r.getMessage()]
                if found:
                    return found
                time.sleep(0.05)
            return []

        [first] = logged("keep-warm round 1 timed out", timeout_s + 20) or [None]
        assert first is not None and first.levelno == logging.WARNING, caplog.text
        assert time.monotonic() - started >= timeout_s           # it waited for the lock, then gave up
        assert logged("keep-warm round 2 timed out", 2 * (timeout_s + 20)), caplog.text   # and carried on
        hold.rollback()
        assert logged("keep-warm rounds back", timeout_s + 20), caplog.text
        began = time.monotonic()
        stop()
        stop = None
        assert time.monotonic() - began < timeout_s + 5
        assert not [t for t in threading.enumerate()
                    if t.name == "graphmem-keep-warm" and t.is_alive() and t not in others]
    finally:
        if not hold.closed():
            hold.rollback()
        holder.close()
        if stop is not None:
            stop()


def test_keep_warm_rounds_converge_when_cold_planning_outlasts_the_timeout(make_services, db, caplog):
    """Found by a helper: when Neo4j takes longer to plan a round's read cold than `keep_warm_query_timeout_s` (a
    slow or loaded machine), it ends the read while planning, no plan is cached, and every later round timed out
    the same way: the rounds never converged and the windows paid the cold plans. Here the timeout is tiny and the
    plan cache cleared, so every cold read outlasts it: after a timed-out round the next round's timeout doubles
    (capped), so the rounds get the time to plan and a round comes back."""
    from api.app import keep_warm
    from graphmem import ops

    services = make_services()
    caplog.set_level(logging.DEBUG, logger="graphmem.app")
    ops.warm_up(services)      # no timeout: loads the embedding model, which is not what this test is about
    with db.driver.session(database=db.database) as s:
        s.run("CALL db.clearQueryCaches()").consume()
    stop = keep_warm(services, 0.05, query_timeout_s=0.05)
    try:
        deadline = time.monotonic() + 90
        messages: list[str] = []
        while time.monotonic() < deadline:
            messages = [r.getMessage() for r in caplog.records if r.name == "graphmem.app"]
            if any("keep-warm rounds back" in m for m in messages):
                break
            time.sleep(0.1)
        assert any("keep-warm round 1 timed out" in m for m in messages), messages   # the cold plans outlasted it
        assert any("keep-warm rounds back" in m for m in messages), messages         # and then a round came back
    finally:
        stop()
