"""A legal hold placed after data passed its retention (before the sweep) keeps it from deletion but does not make
it readable again: the episode, its pin candidate, a fact past its own TTL and a session idle past its TTL stay
hidden from every read (episode and session reads, search, pins, the user's export), the sweep keeps them while
the hold stands, and removes them once it is released. Real HTTP server on loopback; the passage of time is a
test-only raw write moving the records' clocks back."""
from __future__ import annotations

from graphmem.context.pins import OrderIdValue
from graphmem.models import EntityRef, FactIn

COUNTED = ("episodes", "facts", "pins", "sessions")


def _turn(c, sid: str, key: str, content: str) -> str:
    r = c.post(f"/v1/sessions/{sid}/turns", json={"idempotency_key": key, "user_id": "u1", "episodes": [
        {"role": "user", "content": content, "occurred_at": "2026-05-01T09:00:00Z"}]})
    assert r.status_code == 201, r.text
    return r.json()["episode_ids"][0]


def _age(db, tenant: str, old_episode: str, old_fact: str, idle_session: str) -> None:
    """Three days pass for the old turn, the old fact and the idle session (test-only raw write)."""
    with db.driver.session() as s:
        s.run("MATCH (e:Episode {tenant_id: $t, id: $e}) SET e.ingested_at = e.ingested_at - duration({days: 3}), "
              "e.retain_until = e.retain_until - duration({days: 3})", t=tenant, e=old_episode)
        s.run("MATCH (f:Fact {tenant_id: $t, id: $f}) SET f.last_confirmed_at = f.last_confirmed_at - "
              "duration({days: 3}), f.recorded_at = f.recorded_at - duration({days: 3}), "
              "f.retention_basis = f.retention_basis - duration({days: 3}), "
              "f.retain_until = f.retain_until - duration({days: 3}) "
              "WITH f MATCH ()-[l:RELATED {fact_id: f.id}]->() SET l.retain_until = f.retain_until",
              t=tenant, f=old_fact)
        s.run("MATCH (x:Session {tenant_id: $t, id: $s}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant, s=idle_session)


def _search_ids(c, query: str) -> set[str]:
    r = c.post("/v1/search", json={"query": query, "k": 20})
    assert r.status_code == 200, r.text
    return {h["id"] for h in r.json()["hits"]} | {e for h in r.json()["hits"] for e in h.get("episode_ids") or []}


def _hidden(c, old: str, idle_turn: str, fact_id: str) -> None:
    assert c.get(f"/v1/episodes/{old}").status_code == 404
    assert c.get(f"/v1/episodes/{idle_turn}").status_code == 404
    assert old not in {e["id"] for e in c.get("/v1/sessions/s1/episodes").json()["items"]}
    assert c.get("/v1/sessions/idle").status_code == 404
    assert c.get("/v1/sessions/idle/episodes").status_code == 404
    assert [p["key"] for p in c.get("/v1/sessions/s1/pins").json()["items"]] == []
    assert c.get("/v1/sessions/s1/pins/order_id").status_code == 404
    assert c.get(f"/v1/facts/{fact_id}").status_code == 404
    assert not _search_ids(c, "zeppelin parcel") & {old, idle_turn}
    assert fact_id not in _search_ids(c, "walrus lamp")
    export = c.get("/v1/memories/export", params={"user_id": "u1"})
    assert export.status_code == 200, export.text
    for gone in ("zeppelin", "A-10293", "walrus", "narwhal"):
        assert gone not in export.text.lower(), (gone, export.text)
    assert "live turn" in export.text


def test_a_hold_after_retention_passed_keeps_the_data_hidden_and_unswept(client_for, services, db, tenant):
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    r = admin.put(f"/v1/admin/tenants/{tenant}/retention", json={
        "episode_retention_days": 1, "session_ttl_days": 1, "fact_class_ttl_days": {"observation": 1}})
    assert r.status_code == 200, r.text
    old = _turn(agent, "s1", "t1", "My zeppelin parcel A-10293 never arrived")
    new = _turn(agent, "s1", "t2", "This is the live turn")
    idle_turn = _turn(agent, "idle", "i1", "The narwhal zeppelin parcel was late")
    assert services.context.pins.add_candidates(tenant, "s1", [("order_id", OrderIdValue(value="A-10293"), old)]) \
        == ["order_id"]
    fact = services.graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"),
                                                     predicate="OBSERVED", value="Ana ordered a walrus lamp",
                                                     episode_id=new))
    assert fact.fact_id in _search_ids(agent, "walrus lamp")
    _age(db, tenant, old, fact.fact_id, "idle")
    _hidden(agent, old, idle_turn, fact.fact_id)

    r = admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u1", "reason": "case 2024-17"})
    assert r.status_code == 201, r.text
    hold_id = r.json()["id"]
    _hidden(agent, old, idle_turn, fact.fact_id)                  # held, not readable again
    assert agent.get(f"/v1/episodes/{new}").status_code == 200     # what was live stays live, held

    swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant}).json()["tenants"][tenant]["counts"]
    assert {k: swept[k] for k in COUNTED} == dict.fromkeys(COUNTED, 0), swept   # kept from deletion
    _hidden(agent, old, idle_turn, fact.fact_id)

    assert admin.delete(f"/v1/admin/tenants/{tenant}/holds/{hold_id}").status_code == 200
    _hidden(agent, old, idle_turn, fact.fact_id)
    swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant}).json()["tenants"][tenant]["counts"]
    assert (swept["episodes"], swept["facts"], swept["pins"], swept["sessions"]) == (2, 1, 1, 1), swept
    assert agent.get(f"/v1/episodes/{new}").status_code == 200
