"""A write that names a session past its retention but kept under a legal hold is refused (409 naming session_id),
and a re-send under the idempotency key of an episode past its retention but held is refused (409 naming
idempotency_key): nothing is written, nothing is replayed, the old contents stay hidden. Real HTTP server on
loopback; the passage of time is a test-only raw write moving the records' clocks back."""
from __future__ import annotations

import pytest

TURN = {"role": "user", "content": "The narwhal zeppelin parcel was late", "occurred_at": "2026-05-01T09:00:00Z"}


def _turn(c, sid: str, key: str, content: str) -> str:
    r = c.post(f"/v1/sessions/{sid}/turns", json={"idempotency_key": key, "user_id": "u1", "episodes": [
        {**TURN, "content": content}]})
    assert r.status_code == 201, r.text
    return r.json()["episode_ids"][0]


def _counts(db, tenant: str) -> tuple[int, int, int]:
    with db.driver.session() as s:
        return tuple(s.run(f"MATCH (x:{label} {{tenant_id: $t}}) RETURN count(x) AS n", t=tenant).single()["n"]
                     for label in ("Episode", "Pin", "TurnReceipt"))


@pytest.fixture()
def held(client_for, db, tenant):
    """Tenant with session 'idle' (idle past its TTL) and episode key 'old-1' in live session s1 (past its own
    retention), both then put under a hold on their user u1."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    r = admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"episode_retention_days": 1, "session_ttl_days": 1})
    assert r.status_code == 200, r.text
    idle_turn = _turn(agent, "idle", "i1", "The narwhal zeppelin parcel was late")
    r = agent.post("/v1/episodes", json={**TURN, "content": "old walrus note", "session_id": "s1", "user_id": "u1",
                                         "idempotency_key": "old-1"})
    assert r.status_code in (200, 201), r.text
    old = r.json()["episode"]["id"]
    _turn(agent, "s1", "t2", "This is the live turn")
    with db.driver.session() as s:
        s.run("MATCH (e:Episode {tenant_id: $t, id: $e}) SET e.ingested_at = e.ingested_at - duration({days: 3}), "
              "e.retain_until = e.retain_until - duration({days: 3})", t=tenant, e=old)
        s.run("MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.last_active_at = x.last_active_at - "
              "duration({days: 3}), x.retain_until = x.retain_until - duration({days: 3})", t=tenant)
    r = admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u1", "reason": "case 2024-17"})
    assert r.status_code == 201, r.text
    return agent, idle_turn, old


def _refused(r, field: str) -> None:
    assert r.status_code == 409, r.text
    assert r.headers["content-type"].startswith("application/problem+json"), r.headers
    assert r.json()["field"] == field, r.json()


WRITES = {
    "turn": lambda c: c.post("/v1/sessions/idle/turns", json={"idempotency_key": "i2", "user_id": "u1",
                                                               "episodes": [TURN]}),
    "turn_resent": lambda c: c.post("/v1/sessions/idle/turns", json={"idempotency_key": "i1", "user_id": "u1",
                                                                      "episodes": [TURN]}),
    "episode": lambda c: c.post("/v1/episodes", json={**TURN, "session_id": "idle", "user_id": "u1"}),
    "batch": lambda c: c.post("/v1/episodes/batch", json={"episodes": [{**TURN, "session_id": "idle",
                                                                         "user_id": "u1"}]}),
    "create": lambda c: c.post("/v1/sessions", json={"id": "idle", "user_id": "u1"}),
    "context": lambda c: c.post("/v1/sessions/idle/context", json={"user_id": "u1", "query": "parcel", "budget_tokens": 4000,
                                                                    "system_policy": "Be brief."}),
    "pin_delete": lambda c: c.delete("/v1/sessions/idle/pins/order_id", headers={"If-Match": '"1"'}),
    "rollback": lambda c: c.post("/v1/sessions/idle/summaries/rollback"),
    "compact": lambda c: c.post("/v1/sessions/idle/compact"),
    "pin": lambda c: c.put("/v1/sessions/idle/pins/order_id", json={"value": {"type": "order_id", "value": "A-10293"}}),
}


NAMED = {"batch": "episodes[0].session_id"}
"""The field a write's 409 names when not `session_id`: a batch names the item, as its 422s do."""


@pytest.mark.parametrize("write", sorted(WRITES))
def test_a_write_into_a_held_session_past_retention_is_refused(held, db, tenant, write):
    agent, idle_turn, _ = held
    before = _counts(db, tenant)
    _refused(WRITES[write](agent), NAMED.get(write, "session_id"))
    assert _counts(db, tenant) == before
    assert agent.get("/v1/sessions/idle").status_code == 404
    assert agent.get(f"/v1/episodes/{idle_turn}").status_code == 404


def test_a_resend_under_the_key_of_a_held_episode_past_retention_is_refused(held, db, tenant):
    agent, _, old = held
    before = _counts(db, tenant)
    r = agent.post("/v1/episodes", json={**TURN, "content": "old walrus note", "session_id": "s1", "user_id": "u1",
                                         "idempotency_key": "old-1"})
    _refused(r, "idempotency_key")
    r = agent.post("/v1/episodes/batch", json={"episodes": [{**TURN, "content": "old walrus note", "session_id": "s1",
                                                             "user_id": "u1", "idempotency_key": "old-1"}]})
    _refused(r, "episodes[0].idempotency_key")
    assert _counts(db, tenant) == before
    assert agent.get(f"/v1/episodes/{old}").status_code == 404


def test_a_batch_names_the_item_whose_session_or_key_is_held_past_retention(held, db, tenant):
    """A batch's 409 names the item at fault, `episodes[i].session_id` / `episodes[i].idempotency_key`, as its 422s
    name `episodes[i].content` or `episodes[i].user_id`. Helper-found: it named `session_id` / `idempotency_key`, no
    item of the batch."""
    agent, _, _ = held
    before = _counts(db, tenant)
    fresh = {**TURN, "content": "a new note", "session_id": "s1", "user_id": "u1"}
    r = agent.post("/v1/episodes/batch", json={"episodes": [fresh, {**TURN, "session_id": "idle", "user_id": "u1"},
                                                            {**TURN, "session_id": "idle", "user_id": "u1"}]})
    _refused(r, "episodes[1].session_id")
    assert "'idle'" in r.json()["detail"], r.json()
    r = agent.post("/v1/episodes/batch", json={"episodes": [fresh, {**TURN, "content": "old walrus note",
                                                                    "session_id": "s1", "user_id": "u1",
                                                                    "idempotency_key": "old-1"}]})
    _refused(r, "episodes[1].idempotency_key")
    assert "'old-1'" in r.json()["detail"], r.json()
    r = agent.post("/v1/sessions/s1/turns", json={"idempotency_key": "t3", "user_id": "u1", "episodes": [
        {**TURN, "content": "old walrus note", "idempotency_key": "old-1"}]})
    _refused(r, "episodes[0].idempotency_key")      # the episode's own key, not the turn's
    assert _counts(db, tenant) == before


def test_a_turn_resent_under_the_key_of_a_turn_with_a_held_episode_past_retention_is_refused(client_for, db, tenant):
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"episode_retention_days": 1}).status_code == 200
    old = _turn(agent, "s1", "t1", "old walrus note")
    _turn(agent, "s1", "t2", "This is the live turn")
    with db.driver.session() as s:
        s.run("MATCH (e:Episode {tenant_id: $t, id: $e}) SET e.retain_until = e.retain_until - duration({days: 3})",
              t=tenant, e=old)
    assert admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u1", "reason": "x"}).status_code == 201
    before = _counts(db, tenant)
    r = agent.post("/v1/sessions/s1/turns", json={"idempotency_key": "t1", "user_id": "u1",
                                                 "episodes": [{**TURN, "content": "old walrus note"}]})
    _refused(r, "idempotency_key")
    assert _counts(db, tenant) == before
    assert agent.get(f"/v1/episodes/{old}").status_code == 404


def test_a_try_losing_the_race_to_a_turn_with_a_held_episode_past_retention_is_refused(services, client_for, db,
                                                                                         tenant):
    """Of two tries of one turn sent at once, the one that finds the other's receipt recorded first answers with it
    (`_append_turn`'s `_ReceiptTaken` -> `ContextService._replayed`, the receipt as sessions/turn_put returned it),
    not through `_replay`: it applies the same held-past-retention check. Driven deterministically by handing the
    race's answer a receipt whose episode is past retention and held."""
    from graphmem.context.models import TurnIn
    from graphmem.errors import Conflict
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"episode_retention_days": 1}).status_code == 200
    old = _turn(agent, "s1", "t1", "old walrus note")
    with db.driver.session() as s:
        s.run("MATCH (e:Episode {tenant_id: $t, id: $e}) SET e.retain_until = e.retain_until - duration({days: 3})",
              t=tenant, e=old)
    assert admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u1", "reason": "x"}).status_code == 201
    receipt = db.one("sessions/turn_get", tenant_id=tenant, session_id="s1", key="t1")
    turn = TurnIn.model_validate({"idempotency_key": "t1", "user_id": "u1",
                                  "episodes": [{**TURN, "content": "old walrus note"}]})
    before = _counts(db, tenant)
    with pytest.raises(Conflict) as refused:
        services.context._replayed(tenant, "s1", turn, receipt)
    assert refused.value.field == "idempotency_key"
    assert _counts(db, tenant) == before
    assert agent.get(f"/v1/episodes/{old}").status_code == 404
