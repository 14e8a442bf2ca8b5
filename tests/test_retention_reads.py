"""Expired data disappears from every read at once, before the sweeper removes it: the context window's tail,
a fact's provenance and history, episode reads, search and the user's export all filter on retain_until."""
from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.context.models import PinUpdate
from graphmem.errors import NotFound
from graphmem.governance.models import RetentionSettings
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
    # no read shows a revision built on the expired turn, so a rollback finds none to roll back (POST
    # .../summaries/rollback: 404); helper-found: it marked the hidden revision 2 rolled back (200, current null)
    with pytest.raises(NotFound) as err:
        ctx.summaries.rollback(tenant, "s1")
    assert err.value.field == "session_id"
    with db.driver.session() as s:
        assert s.run("MATCH (m:Summary {tenant_id: $t, session_id: 's1'}) RETURN collect(m.status) AS st",
                     t=tenant).single()["st"] == ["active", "active"]
    ctx.append_turn(tenant, "s1", say("k4", "u1", "Any news on order 5512?", minute=3))
    new = ctx.compact_now(tenant, "s1", force=True).summary
    assert new is not None and "flamingo" not in new.text


def test_a_session_idle_past_its_ttl_is_gone_from_every_read_before_the_sweep(make_context, services, db, client_for,
                                                                           tenant):
    """Helper-found: a session idle past the tenant's `session_ttl_days` stayed readable until the hourly sweep (its
    idleness was stamped nowhere): the window, a read-only key's window, search, the export, episode reads, pins,
    summaries and a fact's provenance all still showed its turns. The session now carries `retain_until`
    (last_active_at + the TTL) and every read hides it, its turns, pins and summaries at once, as after the sweep;
    another session of the user, and a held one, stay."""
    agent, analyst, admin = client_for(tenant, "agent"), client_for(tenant, "analyst"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    ctx = make_context(compaction_keep_tokens=0)
    ctx.append_turn(tenant, "old", say("o1", "u1", "My flamingo lamp parcel 4471 never arrived", minute=0, pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "FLAMINGO-4471"})]))
    ctx.append_turn(tenant, "old", say("o2", "u1", "The flamingo lamp was a gift", minute=1))
    assert "flamingo" in ctx.compact_now(tenant, "old", force=True).summary.text
    ctx.append_turn(tenant, "old", say("o3", "u1", "The flamingo courier was Zeppelin", minute=2))
    ctx.append_turn(tenant, "live", say("l1", "u1", "Another flamingo question about my parcel", minute=3))
    ctx.append_turn(tenant, "held", say("h1", "u2", "My flamingo umbrella broke", minute=4))
    old = services.graph.session_episodes(tenant, "old")
    live_ep, = services.graph.session_episodes(tenant, "live")
    fact = services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"),
                                                     predicate="OBSERVED", value="Ana reported a loss",
                                                     episode_id=old[0].id))
    services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate="OBSERVED",
                                              value="Ana reported a loss", episode_id=live_ep.id))
    assert admin.post(f"/v1/admin/tenants/{tenant}/holds",
                      json={"session_id": "held", "reason": "case 7"}).status_code == 201
    with db.driver.session() as s:      # what three days of idleness do to "old" and "held" (test-only raw write)
        stamped = s.run("MATCH (x:Session {tenant_id: $t}) WHERE x.id IN ['old', 'held'] "
                        "SET x.last_active_at = x.last_active_at - duration({days: 3}), "
                        "    x.retain_until = x.retain_until - duration({days: 3}) "
                        "RETURN x.id AS id, x.retain_until IS NOT NULL AS stamped ORDER BY id", t=tenant).data()
    assert stamped == [{"id": "held", "stamped": False}, {"id": "old", "stamped": True}]

    for client in (agent, analyst):                                  # the window, also a read-only key's
        w = client.post("/v1/sessions/old/context", json={"query": "flamingo parcel", "budget_tokens": 2000,
                                                           "model": "gpt-4", "system_policy": "Be brief."})
        assert w.status_code == 200 and "flamingo" not in w.text.lower(), w.text
    held = agent.get("/v1/sessions/held/episodes")                     # held: never expires
    assert held.status_code == 200 and "umbrella" in held.text, held.text
    found = agent.post("/v1/search", json={"query": "flamingo lamp parcel", "k": 20}).json()
    ids = {h["id"] for h in found["hits"]} | {e for h in found["hits"] for e in h.get("episode_ids") or []}
    assert not ids & {e.id for e in old} and live_ep.id in ids, found
    export = agent.get("/v1/memories/export", params={"user_id": "u1"})
    assert export.status_code == 200 and "lamp" not in export.text and "FLAMINGO" not in export.text
    assert "Another flamingo question" in export.text

    assert agent.get("/v1/sessions/old").status_code == 404
    assert {s["id"] for s in agent.get("/v1/sessions").json()["items"]} == {"live", "held"}
    assert agent.get("/v1/sessions/old/pins").status_code == 404
    assert agent.get("/v1/sessions/old/pins/order_id").status_code == 404
    assert agent.get("/v1/sessions/old/summaries").status_code == 404
    assert ctx.summaries.current(tenant, "old") is None and ctx.summaries.list(tenant, "old") == []
    assert ctx.pins.list(tenant, "old") == [] and ctx.sessions.find(tenant, "old") is None
    assert agent.get(f"/v1/episodes/{old[0].id}").status_code == 404
    assert agent.get("/v1/sessions/old/episodes").status_code == 404
    assert services.graph.session_episodes(tenant, "old") == []
    provenance = agent.get(f"/v1/facts/{fact.fact_id}/provenance").json()["items"]
    assert [p["episode_id"] for p in provenance] == [live_ep.id]

    # gone, not only hidden, after the sweep, which finds what the reads already left out
    swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant}).json()["tenants"][tenant]["counts"]
    assert swept["sessions"] == 1 and swept["episodes"] == 3 and swept["pins"] == 1


def test_a_sessions_retention_stamp_follows_settings_and_holds(make_context, services, db, tenant):
    """The session's `retain_until` (last_active_at + `session_ttl_days`) is restamped when the tenant's settings
    change and when a hold on it is placed or released: a session that existed before the TTL was set expires by
    it, a held one never does."""
    ctx = make_context()
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My flamingo parcel never arrived"))
    gov = services.governance

    def stamp():
        with db.driver.session() as s:
            return s.run("MATCH (x:Session {tenant_id: $t, id: 's1'}) "
                         "RETURN x.retain_until = x.last_active_at + duration({days: 2}) AS due, "
                         "x.retain_until IS NULL AS none", t=tenant).single().data()

    assert stamp() == {"due": None, "none": True}                       # no session TTL: never expires
    gov.retention.update(tenant, RetentionSettings(session_ttl_days=2))
    assert stamp() == {"due": True, "none": False}
    hold, _ = gov.holds.place(tenant, "user", "u1", "case 7")
    assert stamp() == {"due": None, "none": True}                       # held: never expires
    gov.holds.release(tenant, hold.id)
    assert stamp() == {"due": True, "none": False}
    gov.retention.update(tenant, RetentionSettings())
    assert stamp() == {"due": None, "none": True}


def test_a_users_memories_show_no_provenance_past_retention(make_context, services, db, client_for, tenant):
    """Helper-found: GET /v1/memories listed, as a fact's provenance, an expired episode and an episode of a session
    idle past its TTL (id, session, when) until the sweep, while every other read left them out. The fact stays
    (expiry is not erasure); its provenance from them goes at once."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    ctx = make_context()
    ctx.append_turn(tenant, "idle", say("i1", "u1", "My flamingo lamp parcel never arrived"))
    ctx.append_turn(tenant, "live", say("l1", "u1", "The courier was Zeppelin"))
    idle, = services.graph.session_episodes(tenant, "idle")
    expired, = services.graph.session_episodes(tenant, "live")
    for name, ep in (("Ana", idle), ("Bo", expired)):
        services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name=name), predicate="OBSERVED",
                                                  value=f"{name} reported a loss", episode_id=ep.id))
    with db.driver.session() as s:      # the session idle three days, the other episode past its retention
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) "
              "SET x.last_active_at = x.last_active_at - duration({days: 3}), "
              "    x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    _expire(db, expired.id)

    memories = agent.get("/v1/memories", params={"user_id": "u1"})
    assert memories.status_code == 200
    items = memories.json()["items"]
    assert sorted(m["fact"]["statement"] for m in items) == ["Ana reported a loss", "Bo reported a loss"]
    assert [m["provenance"] for m in items] == [[], []], memories.text


def test_an_entity_is_in_a_sessions_scope_only_through_episodes_still_retained(make_context, services, graph, db,
                                                                               tenant):
    """Found by a helper (read in cypher/search/rank): a search scoped to a session kept an entity that only an
    expired episode of that session mentioned or supported. The entity itself stays (expiry is not erasure, and its
    fact lives by its own TTL), but it is no longer in that session's scope."""
    ctx = make_context()
    ctx.append_turn(tenant, "s2", say("k1", "u1", "Our carrier is Kestrel Logistics", minute=0))
    [turn] = graph.session_episodes(tenant, "s2")
    graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Organization", name="Kestrel Logistics"),
                                     predicate="OBSERVED", value="Kestrel Logistics carries the parcels",
                                     episode_id=turn.id))

    def found(**scope) -> bool:
        req = SearchRequest(query="Kestrel Logistics", k=10, targets=["entity"], **scope)
        return any(h.entity is not None and h.entity.name == "Kestrel Logistics"
                   for h in services.recall.search(tenant, req).hits)

    assert found(session_id="s2") and found(user_id="u1") and found()
    _expire(db, turn.id)
    assert not found(session_id="s2") and not found(user_id="u1")
    assert found()   # unscoped: the entity and its fact are still there


def test_a_session_idle_past_its_ttl_has_no_summary_to_roll_back(make_context, db, client_for, tenant):
    """A rollback of a session idle past `session_ttl_days` (not yet swept) answered 200 and marked its hidden
    revision rolled back, while every read of the session answers 404 and the sweep would delete it: it is the 404
    of a session without a summary, and the revision is left as it was."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    ctx = make_context(compaction_keep_tokens=0)
    ctx.append_turn(tenant, "old", say("o1", "u1", "My flamingo lamp parcel 4471 never arrived", minute=0))
    ctx.append_turn(tenant, "old", say("o2", "u1", "The flamingo lamp was a gift", minute=1))
    assert ctx.compact_now(tenant, "old", force=True).summary.rev == 1
    with db.driver.session() as s:      # what three days of idleness do to "old" (test-only raw write)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'old'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)

    back = agent.post("/v1/sessions/old/summaries/rollback")
    assert back.status_code == 404 and back.json()["field"] == "session_id", back.text
    with db.driver.session() as s:
        assert s.run("MATCH (m:Summary {tenant_id: $t, session_id: 'old'}) RETURN collect(m.status) AS st",
                     t=tenant).single()["st"] == ["active"]


def test_a_fact_cannot_cite_an_episode_past_its_retention(make_context, services, graph, db, client_for, tenant):
    """Found by a helper: `POST /v1/facts` citing an episode past its retention (its own, or its session's idle
    TTL) answered 200 "created", while `GET /v1/episodes/{id}` said there was no such episode and the sweep later
    removed it. Such an episode is gone to a fact write as to every read: a 404 naming the field, nothing written."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    ctx = make_context()
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My flamingo parcel never arrived", minute=0))
    ctx.append_turn(tenant, "s2", say("k2", "u1", "The courier was Zeppelin Express", minute=1))
    [own] = graph.session_episodes(tenant, "s1")
    [idle] = graph.session_episodes(tenant, "s2")
    fact = {"subject": {"kind": "Person", "name": "Ana"}, "predicate": "OBSERVED", "value": "Ana lost a parcel"}
    for ep in (own, idle):   # retained: the fact is written
        r = agent.post("/v1/facts", json={"facts": [{**fact, "episode_id": ep.id}]})
        assert r.status_code == 200, r.text
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    _expire(db, own.id)
    with db.driver.session() as s:      # three days of idleness for s2 (test-only raw write)
        s.run("MATCH (x:Session {tenant_id: $t, id: 's2'}) SET x.retain_until = x.last_active_at - duration({days: 2})",
              t=tenant)
    before = graph.session_episodes(tenant, "s1")
    for ep in (own, idle):
        assert agent.get(f"/v1/episodes/{ep.id}").status_code == 404
        r = agent.post("/v1/facts", json={"facts": [{**fact, "value": "Ana lost another parcel",
                                                       "episode_id": ep.id}]})
        assert r.status_code == 404 and r.json()["field"] == "facts[0].episode_id", r.text
    assert graph.session_episodes(tenant, "s1") == before
    hits = agent.post("/v1/search", json={"query": "Ana lost another parcel", "k": 50}).json()["hits"]
    assert hits and not [h for h in hits if "another" in h["text"]], hits


def test_refusals_and_jobs_of_an_episode_past_retention_are_gone_from_every_read(make_context, services, db,
                                                                                 client_for, tenant):
    """Found by a helper: `GET /v1/refusals`, the refusals of a user's export (and of `GET /v1/memories/candidates`)
    and `GET /v1/jobs/{episode_id}` (and `GET /v1/jobs/failed`) still showed the refusals and the job of an episode
    of a session idle past its TTL (and of an episode past its own retention), while `GET /v1/episodes/{id}`
    answered 404 and the sweep would delete them. They are gone from those reads at once too; the job is the 404 of
    an episode that does not exist, and a retry of it is that 404 too, re-queuing nothing."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    ctx = make_context()
    for sid, key in (("idle", "i1"), ("own", "o1"), ("live", "l1")):
        ctx.append_turn(tenant, sid, say(key, "u1", f"My parcel from the {sid} chat never arrived"))
    [idle], [own], [live] = (services.graph.session_episodes(tenant, s) for s in ("idle", "own", "live"))
    for ep in (idle, own, live):      # a secret in a fact is refused and recorded against its episode
        r = agent.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Ana"},
                                                     "predicate": "OBSERVED", "episode_id": ep.id,
                                                     "value": "Ana said my password is hunter22!"}]})
        assert r.status_code == 200 and r.json()["outcomes"][0]["action"] == "rejected", r.text

    def shown() -> dict[str, set[str]]:
        listed = agent.get("/v1/refusals", params={"limit": 200})
        export = agent.get("/v1/memories/export", params={"user_id": "u1"})
        cands = agent.get("/v1/memories/candidates", params={"user_id": "u1"})
        assert listed.status_code == export.status_code == cands.status_code == 200
        return {"list": {r["episode_id"] for r in listed.json()["items"]},
                "export": {r["episode_id"] for r in export.json()["refusals"]},
                "candidates": {r["episode_id"] for r in cands.json()["refusals"]},
                "jobs": {ep.id for ep in (idle, own, live) if agent.get(f"/v1/jobs/{ep.id}").status_code == 200},
                "failed": {j["episode_id"] for j in agent.get("/v1/jobs/failed").json()["items"]}}

    everything = {idle.id, own.id, live.id}
    with db.driver.session() as s:      # their extraction failed (test-only raw write)
        s.run("MATCH (e:Episode) WHERE e.id IN $ids SET e.extraction_status = 'failed'", ids=list(everything))
    assert shown() == {"list": everything, "export": everything, "candidates": everything, "jobs": everything,
                       "failed": everything}
    with db.driver.session() as s:      # three days of idleness for "idle" (test-only raw write)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    _expire(db, own.id)

    for ep in (idle, own):
        assert agent.get(f"/v1/episodes/{ep.id}").status_code == 404
        job = agent.get(f"/v1/jobs/{ep.id}")
        assert job.status_code == 404 and job.json()["field"] == "episode_id", job.text
        retry = agent.post(f"/v1/jobs/{ep.id}/retry")      # nor re-queued, which the 404 would hide
        assert retry.status_code == 404 and retry.json()["field"] == "episode_id", retry.text
    assert shown() == {"list": {live.id}, "export": {live.id}, "candidates": {live.id}, "jobs": {live.id},
                       "failed": {live.id}}
    with db.driver.session() as s:
        assert s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN collect(DISTINCT e.extraction_status) AS st",
                     ids=[idle.id, own.id]).single()["st"] == ["failed"]


def test_a_paths_hop_cites_only_its_retained_episodes(make_context, services, db, tenant):
    """A hop's `episode_ids` leave out an episode past retention and a turn of a session past its TTL, as a fact's
    provenance does; recall/around checks each distinct episode once for all hop facts (they share episodes), so
    two facts citing the same gone and kept turns each keep the kept one."""
    ctx = make_context()
    ctx.append_turn(tenant, "old", say("o1", "u1", "Ana works at Acme", minute=0))
    ctx.append_turn(tenant, "live", say("l1", "u1", "Ana works at Acme in Oslo", minute=1))
    ctx.append_turn(tenant, "live", say("l2", "u1", "Acme is in Oslo, Ana said", minute=2))
    old, = services.graph.session_episodes(tenant, "old")
    kept, gone = services.graph.session_episodes(tenant, "live")
    ana, acme, oslo = (EntityRef(kind=k, name=n) for k, n in
                       (("Person", "Ana"), ("Organization", "Acme"), ("Place", "Oslo")))
    works = [services.graph.assert_fact(tenant, FactIn(subject=ana, predicate="WORKS_AT", object=acme,
                                                       episode_id=e.id)) for e in (old, kept, gone)]
    located = [services.graph.assert_fact(tenant, FactIn(subject=acme, predicate="LOCATED_IN", object=oslo,
                                                         episode_id=e.id)) for e in (kept, gone)]
    assert [o.action for o in works + located] == ["created", "duplicate", "duplicate", "created", "duplicate"]
    start = services.graph.get_fact(tenant, works[0].fact_id).subject_id
    cited = {h.fact.id: sorted(h.episode_ids) for p in services.recall.paths_around(tenant, start, max_hops=2)
             for h in p.hops}
    assert cited == {works[0].fact_id: sorted([old.id, kept.id, gone.id]),
                     located[0].fact_id: sorted([kept.id, gone.id])}

    _expire(db, gone.id)
    with db.driver.session() as s:      # what the TTL does to an idle session (test-only raw write)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'old'}) SET x.retain_until = datetime() - duration('PT1S')",
              t=tenant).consume()
    cited = {h.fact.id: sorted(h.episode_ids) for p in services.recall.paths_around(tenant, start, max_hops=2)
             for h in p.hops}
    assert cited == {works[0].fact_id: [kept.id], located[0].fact_id: [kept.id]}
