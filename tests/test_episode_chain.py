"""The NEXT chain stays whole when the session's tail episode is erased and new turns arrive."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

from graphmem.models import EpisodeIn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def chain(db, tenant):
    with db.driver.session() as s:
        rows = s.run("MATCH (a:Episode {tenant_id: $t})-[:NEXT]->(b) RETURN a.content AS a, b.content AS b",
                     t=tenant).data()
    return sorted((r["a"], r["b"]) for r in rows)


def test_chain_survives_erasing_the_tail(graph, services, db, tenant):
    ids = [graph.append_episode(tenant, EpisodeIn(content=f"turn {i}", occurred_at=T0 + timedelta(minutes=i),
                                                  session_id="s1"))[0].id for i in range(3)]
    services.governance.forget(tenant, episode_id=ids[2])
    graph.append_episode(tenant, EpisodeIn(content="turn 3", occurred_at=T0 + timedelta(minutes=3), session_id="s1"))
    graph.append_episode(tenant, EpisodeIn(content="turn 4", occurred_at=T0 + timedelta(minutes=4), session_id="s1"))
    assert chain(db, tenant) == [("turn 0", "turn 1"), ("turn 1", "turn 3"), ("turn 3", "turn 4")]
