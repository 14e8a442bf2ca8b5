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


def test_a_summary_carrying_an_expired_turn_forward_is_gone_from_the_window_at_once(make_context, services, db,
                                                                                   tenant):
    """Helper-found: a revision COVERS only the turns it newly folds, but its text carries its predecessor's forward;
    once the first turn expired, the window (and the export) skipped revision 1, which covers it, and showed
    revision 2, which still quoted it, until the sweeper deleted both."""
    ctx = make_context(compaction_keep_tokens=0)
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My parcel 4471 with the flamingo lamp never arrived.", minute=0))
    ctx.append_turn(tenant, "s1", say("k2", "u1", "I paid 89.90 EUR for the second order.", minute=1))
    ctx.compact_now(tenant, "s1", force=True)       # rev 1 folds turn 1
    ctx.append_turn(tenant, "s1", say("k3", "u1", "Tracking says 2 days.", minute=2))
    rev2 = ctx.compact_now(tenant, "s1", force=True).summary   # rev 2 folds turn 2, carrying rev 1 forward
    assert rev2.rev == 2 and "flamingo" in rev2.text
    first = next(e for e in services.graph.session_episodes(tenant, "s1") if "flamingo" in e.content)

    _expire(db, first.id)
    window = load(ctx, tenant, "s1")
    assert "flamingo" not in window.text
    assert "89.90" in window.text          # turn 2 is still the session's: raw again, as after the sweep
    export = services.governance.memories.export(tenant, "u1")
    assert "flamingo" not in str(export["summaries"])
    assert all("flamingo" not in s.text for s in ctx.summaries.list(tenant, "s1"))   # GET .../summaries


def test_rolling_back_past_an_expired_turn_shows_no_summary_built_on_it(make_context, services, db, tenant):
    """Helper-found: with the first turn expired, a rollback answered the revision it made current again, which
    covers that turn and so quoted it (no read shows such a revision); a compaction carried it forward the same way."""
    ctx = make_context(compaction_keep_tokens=0)
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My parcel 4471 with the flamingo lamp never arrived.", minute=0))
    ctx.append_turn(tenant, "s1", say("k2", "u1", "I paid 89.90 EUR for the second order.", minute=1))
    ctx.compact_now(tenant, "s1", force=True)
    ctx.append_turn(tenant, "s1", say("k3", "u1", "Tracking says 2 days.", minute=2))
    ctx.compact_now(tenant, "s1", force=True)
    first = next(e for e in services.graph.session_episodes(tenant, "s1") if "flamingo" in e.content)

    _expire(db, first.id)
    assert ctx.summaries.current(tenant, "s1") is None
    back = ctx.summaries.rollback(tenant, "s1")          # POST .../summaries/rollback answers it
    assert back is None or "flamingo" not in back.text
    ctx.append_turn(tenant, "s1", say("k4", "u1", "Any news on order 5512?", minute=3))
    new = ctx.compact_now(tenant, "s1", force=True).summary
    assert new is not None and "flamingo" not in new.text
