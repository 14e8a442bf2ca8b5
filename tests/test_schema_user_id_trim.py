"""Schema 23: a user id is trimmed of the characters `graphmem.identifiers.blank` finds blank at either end since commit
268ec2c (`graphmem.models.SameUser`), where it was stored as sent, so a graph from before may hold user "u3\\u200b"
on its episodes (`Episode.user_id`), sessions (`Session.user_id`), consent (`Consent.subject` "user:u3\\u200b"), a
legal hold on the user (`LegalHold.target_id`) and the user's own entity (external id "user:\\u200bu3", which schema
21 left: its blank is inside the key). No call reaches them by user id now ("u3\\u200b" is "u3"). Start-up stores them
trimmed, so forget, memories and a turn of user "u3" over HTTP reach them; where user "u3" already has its own
consent or legal hold, the old record stays as written (both kept, nothing merged) and a warning names both."""
from __future__ import annotations

import logging

from graphmem.store.schema import apply_schema

T0 = "2024-05-01T09:00:00Z"
ZW = "\u200b"


def _raw(db, query: str, **params) -> list[dict]:
    """A test-only raw Cypher statement: writes the legacy forms a schema-22 graph may hold, reads what is stored."""
    with db.driver.session(database=db.database) as s:
        return [r.data() for r in s.run(query, **params)]


def _legacy_user(db, tenant: str, user: str, stored: str) -> None:
    """Rewrites every record of user `user` as a graph written before the trim rule holds it, user id `stored`."""
    _raw(db, "MATCH (n {tenant_id: $t, user_id: $u}) WHERE n:Episode OR n:Session SET n.user_id = $v",
         t=tenant, u=user, v=stored)
    _raw(db, "MATCH (c:Consent {tenant_id: $t, subject: 'user:' + $u}) SET c.subject = 'user:' + $v",
         t=tenant, u=user, v=stored)
    _raw(db, "MATCH (h:LegalHold {tenant_id: $t, target_kind: 'user', target_id: $u}) SET h.target_id = $v",
         t=tenant, u=user, v=stored)


def test_schema_22_graph_gets_its_user_ids_trimmed(db, settings, client_for, tenant, caplog):
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    holds = f"/v1/admin/tenants/{tenant}/holds"
    ep = agent.post("/v1/episodes", json={"content": "u3 prefers email", "occurred_at": T0, "user_id": "u3",
                                          "session_id": "s3", "role": "user"})
    assert ep.status_code == 201, ep.text
    fact = agent.post("/v1/facts", json={"facts": [{
        "subject": {"kind": "Person", "name": "Una Berg", "external_ids": ["user:u3"]},
        "predicate": "PREFERS_CHANNEL", "value": "email", "episode_id": ep.json()["episode"]["id"]}]})
    assert fact.status_code == 200, fact.text
    fact_id = fact.json()["outcomes"][0]["fact_id"]
    assert agent.put("/v1/consent", json={"scope": "user", "user_id": "u3", "share_preferences": True}).status_code == 200
    hold = admin.post(holds, json={"user_id": "u3", "reason": "case 3"})
    assert hold.status_code == 201, hold.text
    _legacy_user(db, tenant, "u3", f"u3{ZW}")
    _raw(db, "MATCH (x:ExternalId {tenant_id: $t, key: 'user:u3'})-[:IDENTIFIES]->(e:Entity) SET x.key = $v, "
             "e.external_ids = [i IN e.external_ids | CASE WHEN i = 'user:u3' THEN $v ELSE i END]",
         t=tenant, v=f"user:{ZW}u3")

    # user u4 holds both forms of its consent and its hold: the old one stays, named in a warning
    assert agent.put("/v1/consent", json={"scope": "user", "user_id": "u4", "share_preferences": True}).status_code == 200
    old_hold = admin.post(holds, json={"user_id": "u4", "reason": "case 4"}).json()["id"]
    _legacy_user(db, tenant, "u4", f"{ZW}u4")
    assert agent.put("/v1/consent", json={"scope": "user", "user_id": "u4", "share_preferences": False}).status_code == 200
    new_hold = admin.post(holds, json={"user_id": "u4", "reason": "case 4b"}).json()["id"]

    db.execute("meta/set_schema", version=22, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False   # once

    memories = agent.get("/v1/memories", params={"user_id": "u3"})
    assert [m["fact"]["id"] for m in memories.json()["items"]] == [fact_id], memories.text
    sessions = agent.get("/v1/sessions", params={"user_id": "u3"}).json()["items"]
    assert [s["id"] for s in sessions] == ["s3"], sessions
    consents = agent.get("/v1/consent", params={"user_id": "u3"}).json()
    assert [(c["user_id"], c["share_preferences"]) for c in consents if c["scope"] == "user"] == [("u3", True)]
    turn = agent.post("/v1/sessions/s3/turns", json={"idempotency_key": "t1", "user_id": "u3", "episodes": [
        {"role": "user", "content": "and sms on weekends", "occurred_at": T0}]})
    assert turn.status_code == 201, turn.text        # the session's own user, not another's

    targets = {h["id"]: h["target_id"] for h in admin.get(holds).json()["items"]}
    assert targets == {hold.json()["id"]: "u3", old_hold: f"{ZW}u4", new_hold: "u4"}, targets
    refused = agent.post("/v1/forget", json={"user_id": "u3"})   # the hold reaches the user's data
    assert refused.status_code == 422 and "legal hold" in refused.json()["detail"], refused.text
    assert admin.delete(f"{holds}/{hold.json()['id']}").status_code == 200
    done = agent.post("/v1/forget", json={"user_id": "u3"})
    assert done.status_code == 200, done.text
    counts = done.json()["counts"]
    assert (counts["episodes"], counts["entities"], counts["consents"], counts["sessions"]) == (2, 1, 1, 1), counts
    assert agent.get("/v1/entities", params={"name": "Una Berg"}).json()["items"] == []

    subjects = _raw(db, "MATCH (c:Consent {tenant_id: $t}) RETURN c.subject AS s, c.share_preferences AS p", t=tenant)
    assert {(r["s"], r["p"]) for r in subjects} == {(f"user:{ZW}u4", True), ("user:u4", False)}, subjects
    assert f"legal hold {old_hold} on {ZW + 'u4'!r} (user 'u4' has {new_hold})" in caplog.text, caplog.text
    assert f"consent of {'user:' + ZW + 'u4'!r} ('user:u4' has one)" in caplog.text, caplog.text
