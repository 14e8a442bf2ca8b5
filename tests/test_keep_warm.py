"""The API runs its warm-up reads again every few seconds (`api.app.keep_warm`): Neo4j replans a cached plan once the
statistics it was made from have changed enough and 10 s have passed, and the query that finds it stale waits for
the new plan (1.2-1.4 s for the search). Found by helpers' hands-on tests: a context window right after a burst of
writes came back without its retrieved tier (search timed out after 0.30 s). On a private Neo4j, whose statistics
this test controls: it starts nearly empty and then holds 40x more facts."""
from __future__ import annotations

import time

import httpx

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.services import Services
from tests.http_fixture import serve
from tests.neo4j_fixture import private_neo4j


def test_a_window_after_writes_that_stale_the_plans_keeps_its_retrieved_tier(tmp_path):
    with private_neo4j(tmp_path / "home") as (_, settings):
        services = Services.from_settings(settings.model_copy(update={"keep_warm_interval_s": 1.0}))
        assert services.settings.context_search_timeout_s == 0.3
        tenant = "keep-warm"
        _, key = services.keys.create(tenant, "agent", "test")
        services.ingest.append_episodes(tenant, [EpisodeIn(
            kind="message", content="My locker code at the Oslo office is 4471", occurred_at="2024-05-01T09:00:00Z",
            user_id="u1", role="user")], extract=False)
        body = {"query": "what is my locker code?", "budget_tokens": 2000, "user_id": "u1",
                "system_policy": "You are Acme's support agent."}
        try:
            with serve(services) as url, httpx.Client(base_url=url, timeout=60,
                                                      headers={"Authorization": f"Bearer {key}"}) as c:
                def window() -> dict:
                    r = c.post("/v1/sessions/s1/context", json=body)
                    assert r.status_code == 200, r.text
                    return r.json()

                assert any("4471" in p["text"] for p in window()["pieces"] if p["tier"] == "retrieved")
                other = "keep-warm-bulk"      # 2,000 facts: the fact and entity counts grow 40x and more
                ep, _ = services.graph.append_episode(other, EpisodeIn(content="import",
                                                                       occurred_at="2024-01-01T00:00:00Z"))
                for start in range(0, 2000, 1000):
                    services.graph.assert_facts(other, [FactIn(
                        subject=EntityRef(kind="Person", name=f"Person {i}"), predicate="WORKS_AT",
                        object=EntityRef(kind="Organization", name=f"Org {i % 40}"), episode_id=ep.id)
                        for i in range(start, start + 1000)])
                time.sleep(12)                # past dbms.cypher.min_replan_interval (10 s): the plans are stale
                for _ in range(3):
                    w = window()
                    assert [d for d in w["degraded"] if d["source"] == "search"] == [], w["degraded"]
                    assert any("4471" in p["text"] for p in w["pieces"] if p["tier"] == "retrieved"), w["text"]
        finally:
            services.close()
