"""Expired data disappears from every read at once, before the sweeper removes it: the context window's tail,
a fact's provenance and history, episode reads, search and the user's export all filter on retain_until."""
from __future__ import annotations

from datetime import timedelta

from graphmem.models import EntityRef, FactIn
from graphmem.recall.models import SearchRequest
from graphmem.timeutil import utcnow
from tests.test_context_sessions import load, say


def _expire(db, episode_id):
    """What the passage of the tenant's retention period does to an episode (test-only raw write)."""
    with db.driver.session() as s:
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $t", id=episode_id, t=utcnow() - timedelta(seconds=1))


def test_an_expired_episode_is_gone_from_window_provenance_and_search(make_context, services, graph, db, tenant):
    ctx = make_context()
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My flamingo parcel never arrived", minute=0))
    ctx.append_turn(tenant, "s1", say("k2", "u1", "The courier was Zeppelin Express", minute=1))
    old, new = graph.session_episodes(tenant, "s1")
    fact = graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate="OBSERVED",
                                            value="Ana lost a flamingo parcel", episode_id=old.id))
    graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate="OBSERVED",
                                     value="Ana lost a flamingo parcel", episode_id=new.id))
    assert "flamingo" in load(ctx, tenant, "s1").text

    _expire(db, old.id)
    window = load(ctx, tenant, "s1", query="flamingo parcel")
    assert "My flamingo parcel never arrived" not in window.text and "Zeppelin" in window.text
    assert [p.episode_id for p in graph.fact_provenance(tenant, fact.fact_id)] == [new.id]
    assert [e.id for e in graph.session_episodes(tenant, "s1")] == [new.id]
    hits = services.recall.search(tenant, SearchRequest(query="flamingo parcel", k=10)).hits
    assert old.id not in {h.id for h in hits}
    assert all(old.id not in h.episode_ids for h in hits)
    export = services.governance.memories.export(tenant, "u1")   # the user's export, like every read
    assert [e["id"] for e in export["episodes"]] == [new.id] and "never arrived" not in str(export)
