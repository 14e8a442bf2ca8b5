"""Operations endpoints while Neo4j is down, through a real server on loopback: readiness says so at once
(503 problem+json), a Prometheus scrape still answers promptly with the counters (a scraper gives up after
~10 s), and an authenticated request is a prompt 503 problem, not a 500 after minutes of retries. Stops its own
private Neo4j, so it does not touch the session's."""
from __future__ import annotations

import time

import httpx

from graphmem.services import Services
from graphmem.store import Database
from graphmem.store.schema import apply_schema
from tests.http_fixture import serve
from tests.neo4j_fixture import private_neo4j


def test_readiness_and_metrics_while_neo4j_is_down(tmp_path) -> None:
    with private_neo4j(tmp_path / "home") as (server, settings):
        db = Database.from_settings(settings)
        apply_schema(db, settings.embedding_dimension)
        services = Services(db, settings)
        _, secret = services.keys.create("ops-down", "agent")
        try:
            with serve(services) as url:
                assert httpx.get(f"{url}/readyz").json()["neo4j"] == "ok"
                assert 'graphmem_jobs{state="pending"} 0.0' in httpx.get(f"{url}/metrics").text
                server.stop()

                t0 = time.monotonic()
                ready = httpx.get(f"{url}/readyz", timeout=30)
                assert ready.status_code == 503
                assert ready.headers["content-type"] == "application/problem+json"
                assert "not reachable" in ready.json()["detail"]
                assert ready.json()["instance"] == "/readyz" and ready.json()["request_id"], ready.text
                metrics = httpx.get(f"{url}/metrics", timeout=30)
                assert metrics.status_code == 200 and "graphmem_http_request_duration_seconds" in metrics.text
                assert time.monotonic() - t0 < 10  # was ~130 s: the scrape waited out the driver's retries

                t0 = time.monotonic()
                search = httpx.post(f"{url}/v1/search", json={"query": "who is Dana"}, timeout=60,
                                    headers={"Authorization": f"Bearer {secret}"})
                assert search.status_code == 503, search.text   # was a 500 after the key lookup's two minutes
                assert search.headers["content-type"] == "application/problem+json"
                assert "Neo4j" in search.json()["detail"]
                assert time.monotonic() - t0 < 10
        finally:
            services.close()
