"""The API plans its hot reads when it starts (`graphmem.ops.warm_up`): Neo4j plans the search query in 1.3-1.8 s
cold, and a context window waits 0.3 s for its search, so without the warm-up the first windows after a start came
back without their retrieved tier, marked degraded. A real server on loopback. Whether a window's search waited for a
plan is read from Neo4j's query collector (`tests.plan_stats`), not from a timeout, so a slow or busy machine
neither fails the test nor hides a cold plan: the window's timeouts here are generous."""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from graphmem.models import EpisodeIn
from graphmem.ops import WARM_UP_TENANT
from graphmem.services import Services
from tests.context_fixture import PATIENT_SEARCH
from tests.http_fixture import serve
from tests.neo4j_fixture import schema_lock_held
from tests.plan_stats import collecting


@contextmanager
def warmed_server(services: Services, key: str) -> Iterator[httpx.Client]:
    """A client of a real server around `services`, once its start's warm-up is over: /readyz says when (helper-found:
    after a slow start nothing did)."""
    with serve(services) as url, httpx.Client(base_url=url, timeout=60,
                                             headers={"Authorization": f"Bearer {key}"}) as c:
        deadline = time.monotonic() + 120
        while (state := c.get("/readyz").json()["warm_up"]) == "running" and time.monotonic() < deadline:
            time.sleep(0.5)
        assert state == "done", state
        yield c


def _clear_plan_cache(db) -> None:
    with db.driver.session(database=db.database) as s:
        s.run("CALL db.clearQueryCaches()").consume()


def test_every_warmed_read_is_one_the_warm_up_makes(db, settings):
    """A read marked `warmed` runs on its cached plan however stale while a keep-warm runs, and only the warm-up's
    rounds replan it (`Database.skip_replans`): one the warm-up did not make would keep a plan made on a nearly
    empty database for as long as the server runs. Every named read marked so in the code is one of the warm-up's."""
    import re
    from pathlib import Path

    from graphmem import ops
    from tests.test_recall_plans import Recording

    root = Path(__file__).resolve().parents[1]
    marked = {name for path in [*root.glob("graphmem/**/*.py"), *root.glob("api/**/*.py")]
              for name in re.findall(r'"([\w/]+)",\s*warmed=True', path.read_text())}
    assert {"keys/by_hash", "sessions/window_state", "search/rank", "recall/around"} <= marked, marked
    recording = Recording(db)
    ops.warm_up(Services(recording, settings))
    assert marked <= set(recording.shapes), marked - set(recording.shapes)


def test_the_app_builds_its_openapi_schema_when_it_starts(db, settings):
    """Every request's shape check reads the OpenAPI schema (`api.request_shape`), which FastAPI builds on first
    use: the first request after a start, a context window, spent 0.4-0.6 s building it (traced on a fresh demo
    graph: 1.2-1.4 s for that window over HTTP, 0.15 s once built at the start). The app's start builds it."""
    import asyncio

    from api.app import create_app

    app = create_app(Services(db, settings))

    async def started() -> bool:
        async with app.router.lifespan_context(app):
            return app.openapi_schema is not None and bool(app.state.request_shapes)

    assert app.openapi_schema is None
    assert asyncio.run(started())


def test_the_first_window_after_a_start_holds_what_search_finds(db, settings, tenant):
    services = Services(db, settings.model_copy(update=PATIENT_SEARCH))
    assert services.settings.warm_up_timeout_s > 0
    _, key = services.keys.create(tenant, "agent", "test")
    services.ingest.append_episodes(tenant, [EpisodeIn(    # the user's, in no session: a window of theirs may see it
        kind="message", content="My locker code at the Oslo office is 4471", occurred_at="2024-05-01T09:00:00Z",
        user_id="u1", role="user")], extract=False)
    _clear_plan_cache(db)
    try:
        with collecting(db) as stats, warmed_server(services, key) as c:
            for query in ("what is my locker code?",            # the plans do not depend on the query's length
                          "which locker code did I get at the office in Oslo, the one I told you about in May?"):
                r = c.post("/v1/sessions/s1/context", json={"query": query, "budget_tokens": 2000,
                                                           "system_policy": "You are Acme's support agent.",
                                                           "user_id": "u1"})
                assert r.status_code == 200, r.text
                w = r.json()
                assert [d for d in w["degraded"] if d["source"] == "search"] == [], w["degraded"]
                assert any("4471" in p["text"] for p in w["pieces"] if p["tier"] == "retrieved"), w["text"]
            planning_s = max(stats.compile_s("search/rank", WARM_UP_TENANT))   # planned cold at the start
            searches = stats.compile_s("search/rank", tenant)
            assert len(searches) >= 2, searches
            assert max(searches) < planning_s / 10, (searches, planning_s)      # the windows' came from the cache
            # and so did the reads a window makes before its search (the first cost 0.1-0.5 s each when not warmed)
            for name in ("governance/held_expired_sessions", "sessions/window_state"):
                window_s, start_s = stats.compile_s(name, tenant), stats.compile_s(name, WARM_UP_TENANT)
                assert len(window_s) >= 2 and max(window_s) < max(start_s) / 10, (name, window_s, start_s)
    finally:
        services.context.close()     # its thread pools; the database is the session's


def test_a_warm_up_blocked_by_neo4j_times_out_logs_and_the_server_serves(make_services, db, caplog):
    """Found by a helper: the start's warm-up ran its reads without a transaction timeout (the keep-warm rounds have
    one), so a Neo4j that never answered them hung the warm-up thread for good, /readyz saying "running" forever.
    As in the keep-warm test, a transaction creating an index, left open, holds the schema lock the warm-up's search
    needs. Its reads now run under `keep_warm_query_timeout_s` (`Database.timeout`): Neo4j ends the blocked read
    after that long, the warm-up logs a warning and ends as failed, and the start had already stopped waiting."""
    from api.app import warm_up

    timeout_s = 2.0
    services = make_services(keep_warm_query_timeout_s=timeout_s)
    caplog.set_level(logging.DEBUG, logger="graphmem.app")
    holder, hold = schema_lock_held(db, "warm_up_blocker")     # rolled back below, so no index is made
    try:
        others = {t for t in threading.enumerate() if t.name == "graphmem-warm-up"}   # other tests' servers
        started = time.monotonic()
        status = warm_up(services, 0.2)                      # the start waits 0.2 s, then serves
        assert time.monotonic() - started < timeout_s and status.state == "running"
        [mine] = [t for t in threading.enumerate() if t.name == "graphmem-warm-up" and t not in others]
        mine.join(timeout_s + 20)
        assert not mine.is_alive(), "the warm-up thread still waits for Neo4j"
        assert time.monotonic() - started >= timeout_s                        # it waited for the lock, then gave up
        assert status.state.startswith("failed: QueryTimedOut"), status.state
        assert [r for r in caplog.records if r.name == "graphmem.app" and r.levelno == logging.WARNING
                and "warm-up timed out" in r.getMessage()], caplog.text
    finally:
        hold.rollback()
        holder.close()
        services.context.close()


def test_the_first_turn_and_episode_after_a_start_run_on_the_plans_the_warm_up_made(db, settings, tenant):
    """Traced on a fresh demo graph: the first turn after a start spent 1.3-1.9 s planning its writes
    (`episodes/append` 0.4-0.6 s for each shape of its episodes: with and without an extraction job), since the
    warm-up only read. It now runs a turn, a later turn's session check and an episode, each transaction rolled
    back (`Database.rolling_back`), and a user's memories as for users with ids: every statement of a first turn,
    of a second, of a first episode in each shape and of a first memories page over HTTP comes from its plans
    (compile times from Neo4j's query collector), and the warm-up stored nothing."""
    from tests.test_context_sessions import say

    services = Services(db, settings)
    _, key = services.keys.create(tenant, "agent", "test")
    # a restart over data: on a nearly empty database the requests' own writes would move Neo4j's statistics enough
    # (a label's count from 0 to 1) for the next request to replan what the warm-up planned, as after any growth
    for n in range(20):
        services.context.append_turn(f"{tenant}-before", f"s{n}", say("t", f"u{n}", f"order A-{n} arrived broken"))
        services.ingest.append_episode(f"{tenant}-before", EpisodeIn(
            kind="message", content=f"event {n}", occurred_at="2024-05-01T09:00:00Z"))
    _clear_plan_cache(db)
    try:
        with collecting(db) as stats, warmed_server(services, key) as c:
            for n in (1, 2):      # the first turn creates the session, the second finds it
                episodes = [{"role": "user", "content": f"My order A-1029{n} arrived broken",
                             "occurred_at": "2024-05-01T09:00:00Z"},
                            {"role": "assistant", "content": "Thanks!", "occurred_at": "2024-05-01T09:00:05Z"}]
                r = c.post("/v1/sessions/s1/turns", json={"idempotency_key": f"turn-{n}", "user_id": "u1",
                                                          "episodes": episodes})
                assert r.status_code == 201, r.text
            for n, scope in enumerate(({"session_id": "s2", "user_id": "u2"}, {"session_id": "s3"}, {})):
                r = c.post("/v1/episodes", json={"kind": "message", "role": "user", "content": "I moved to Globex",
                                                 "occurred_at": "2024-05-02T09:00:00Z", "idempotency_key": f"e-{n}",
                                                 **scope})   # in a session of a user, without one, in none
                assert r.status_code == 201, r.text
            assert c.get("/v1/memories", params={"user_id": "u1"}).status_code == 200   # episodes, no entities
            requests, start = stats.compiles(tenant), stats.compiles(WARM_UP_TENANT)
            ran = {"sessions/create", "episodes/append", "sessions/turn_put", "sessions/reset_window",
                   "governance/user_facts"}
            assert ran <= set(requests), requests
            cold = {name: (times, max(start.get(name, [0.0]))) for name, times in requests.items()
                    if max(times) >= max(start.get(name, [0.0])) / 3}
            assert cold == {}, cold       # {name: (the requests' compile times, the warm-up's)}
    finally:
        services.context.close()
    with db.driver.session(database=db.database) as s:
        left = s.run("MATCH (n) WHERE n.tenant_id = $t RETURN labels(n) AS labels", t=WARM_UP_TENANT).data()
    assert left == []


def test_writes_inside_rolling_back_return_their_results_and_store_nothing(db, settings, tenant):
    sessions = Services(db, settings).context.sessions
    with db.rolling_back():
        info, created = sessions.create(tenant, "u1", "s1", None)
        assert created and info.id == "s1" and info.user_id == "u1"
        assert sessions.find(tenant, "s1") is None      # the next transaction does not see it
    assert sessions.find(tenant, "s1") is None
    _, created = sessions.create(tenant, "u1", "s1", None)   # outside the block writes commit again
    assert created and sessions.find(tenant, "s1").user_id == "u1"


def test_a_sample_turn_the_settings_refuse_leaves_the_reads_after_it_planned(db, settings, caplog):
    """Helper-found: with `max_episode_chars` below the length of the warm-up's sample episode its turn was refused,
    which ended the warm-up there (`/readyz` "failed: InvalidInput ...") and left the multi-hop reads after it
    unplanned, the first paths request 1.3 s. The refusal is a warning now, and the reads after it run."""
    from graphmem import ops
    from tests.test_recall_plans import Recording

    caplog.set_level(logging.WARNING, logger="graphmem.ops")
    recording = Recording(db)
    ops.warm_up(Services(recording, settings.model_copy(update={"max_episode_chars": 3})))
    assert {"recall/around", "governance/user_facts"} <= set(recording.shapes), set(recording.shapes)
    assert [r for r in caplog.records if "settings refuse its sample turn" in r.getMessage()], caplog.text


def test_keep_warm_rounds_leave_the_writes_out(db, settings):
    """A helper measured the rolled-back writes in every keep-warm round (every 2 s) doubling an idle server's CPU
    and its Neo4j's: the rounds replan the reads only; the start's warm-up plans the writes."""
    from api.app import keep_warm

    services = Services(db, settings)
    with collecting(db) as stats:
        stop = keep_warm(services, 0.2)
        try:
            deadline = time.monotonic() + 120
            while not stats.compile_s("search/rank", WARM_UP_TENANT) and time.monotonic() < deadline:
                time.sleep(0.5)
            time.sleep(1)     # a round or more past the first search
        finally:
            stop()
            services.context.close()
        rounds = stats.compiles(WARM_UP_TENANT)
    assert "search/rank" in rounds and "recall/around" in rounds, rounds
    assert not {"episodes/append", "sessions/create", "sessions/turn_put"} & set(rounds), rounds
