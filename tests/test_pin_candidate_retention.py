"""A pin candidate whose source turn is past its own retention is gone for every read and write before the sweep
deletes it (the expiry cascade's `candidate_episode_ids`): the pin reads (list, get), the context window and the
user's export leave it out, as they leave out the turn; a write of its key by the agent creates the pin as if no candidate were there, and a
re-proposal from a live turn replaces it. Real HTTP server on loopback; the candidates are written through the
server's own `PinStore.add_candidates` (compaction's write), the retention passes by a test-only raw write."""
from __future__ import annotations

from datetime import UTC, datetime

from graphmem.context.pins import ApprovalIdValue, OrderIdValue

PAST = datetime(2020, 1, 1, tzinfo=UTC)
POLICY = "You are Acme's support agent."


def _turn(c, sid: str, key: str, content: str) -> str:
    r = c.post(f"/v1/sessions/{sid}/turns", json={"idempotency_key": key, "user_id": "u1", "episodes": [
        {"role": "user", "content": content, "occurred_at": f"2026-05-01T09:0{key[-1]}:00Z"}]})
    assert r.status_code == 201, r.text
    return r.json()["episode_ids"][0]


def _expire(db, episode_id: str) -> None:
    with db.driver.session() as s:                    # the turn's own retention passes (test-only raw write)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $past", id=episode_id, past=PAST)


def test_reads_hide_a_candidate_whose_turn_is_past_retention(client_for, services, db, tenant):
    c = client_for(tenant)
    _turn(c, "s1", "t0", "hello")
    old = _turn(c, "s1", "t1", "My order A-10293 never arrived")
    new = _turn(c, "s1", "t2", "The approval id is AP-5521")
    assert services.context.pins.add_candidates(tenant, "s1", [
        ("order_id", OrderIdValue(value="A-10293"), old), ("approval_id", ApprovalIdValue(value="AP-5521"), new)]) \
        == ["order_id", "approval_id"]
    _expire(db, old)

    r = c.get("/v1/sessions/s1/pins")
    assert r.status_code == 200 and [p["key"] for p in r.json()["items"]] == ["approval_id"], r.text
    r = c.get("/v1/sessions/s1/pins", params={"status": "candidate"})
    assert [p["key"] for p in r.json()["items"]] == ["approval_id"], r.text
    r = c.get("/v1/sessions/s1/pins/order_id")
    assert r.status_code == 404, r.text
    assert c.get("/v1/sessions/s1/pins/approval_id").status_code == 200
    r = c.post("/v1/sessions/s1/context", json={"budget_tokens": 2000, "system_policy": POLICY})
    assert r.status_code == 200, r.text
    window = r.json()
    assert "A-10293" not in window["text"] and "order_id" not in window["pin_versions"], window
    assert "AP-5521" in window["text"] and "approval_id" in window["pin_versions"], window
    r = c.get("/v1/memories/export", params={"user_id": "u1"})            # the user's export, like every read
    assert r.status_code == 200 and [p["key"] for p in r.json()["pins"]] == ["approval_id"], r.text


def test_writes_treat_a_candidate_whose_turn_is_past_retention_as_absent(client_for, services, db, tenant):
    c = client_for(tenant)
    old = _turn(c, "s1", "t1", "My order A-10293 never arrived, approval AP-5521, refund order B-77")
    new = _turn(c, "s1", "t2", "Actually the order is A-20000")
    pins = services.context.pins
    assert pins.add_candidates(tenant, "s1", [("order_id", OrderIdValue(value="A-10293"), old),
                                              ("approval_id", ApprovalIdValue(value="AP-5521"), old),
                                              ("refund_order", OrderIdValue(value="B-77"), old)]) \
        == ["order_id", "approval_id", "refund_order"]
    _expire(db, old)

    # the agent writes the key as a new pin (no version): created, as if no candidate were there (its version
    # continues the candidate's, as after the sweep: a write that read the candidate before gets a 409)
    r = c.put("/v1/sessions/s1/pins/order_id", json={"value": {"type": "order_id", "value": "A-55"}})
    assert r.status_code == 201, r.text
    assert (r.json()["version"], r.json()["status"], r.json()["value"]["value"]) == (2, "active", "A-55"), r.text
    r = c.put("/v1/sessions/s1/pins/order_id", json={"value": {"type": "order_id", "value": "A-56"}, "version": 1})
    assert r.status_code == 409, r.text
    # ... and in a turn (its pre-check and its write)
    r = c.post("/v1/sessions/s1/turns", json={"idempotency_key": "t3", "user_id": "u1", "episodes": [
        {"role": "assistant", "content": "Noted.", "occurred_at": "2026-05-01T09:03:00Z"}], "pins": [{"key": "approval_id",
                                                              "value": {"type": "approval_id", "value": "AP-9"}}]})
    assert r.status_code == 201 and r.json()["pins"] == {"approval_id": 2}, r.text
    # a delete of it finds no pin
    r = c.delete("/v1/sessions/s1/pins/refund_order", headers={"If-Match": '"1"'})
    assert r.status_code == 404, r.text
    # a re-proposal from a live turn replaces it
    assert pins.add_candidates(tenant, "s1", [("refund_order", OrderIdValue(value="B-78"), new)]) == ["refund_order"]
    got = pins.get(tenant, "s1", "refund_order")
    assert (got.set_by, got.status, got.value.value) == (new, "candidate", "B-78"), got
    r = c.get("/v1/sessions/s1/pins")
    assert [(p["key"], p["status"]) for p in r.json()["items"]] == [
        ("approval_id", "active"), ("order_id", "active"), ("refund_order", "candidate")], r.text
