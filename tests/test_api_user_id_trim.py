"""A user id is trimmed of the characters `graphmem.identifiers.blank` finds blank at either end, as an external id is
(`graphmem.models.SameUser`, the one rule): helper-found, schema 21 made the user's own entity of external id
"user:u1\\u200b" "user:u1", but a `user_id` of "u1\\u200b" was used as sent, so forgetting user "u1\\u200b" left
the entity (and the episodes of "u1"), their memories listed nothing, the session of "u1" refused their turn as
another user's. Now "u1", "u1\\u200b" and "\\ufeffu1" are one user in every route that takes a user id. Real HTTP."""
from __future__ import annotations

T0 = "2024-05-01T09:00:00Z"


def _episode(agent, user: str, session: str) -> str:
    r = agent.post("/v1/episodes", json={"content": f"{user} prefers email", "occurred_at": T0, "user_id": user,
                                         "session_id": session, "role": "user"})
    assert r.status_code == 201, r.text
    assert r.json()["episode"]["user_id"] == user.strip("\u200b\ufeff"), r.text
    return r.json()["episode"]["id"]


def _own_fact(agent, ep: str, name: str, user: str) -> str:
    """A fact about the user's own entity (external id "user:<user>") from episode `ep`; its id."""
    r = agent.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": name,
                                                             "external_ids": [f"user:{user}"]},
                                                 "predicate": "PREFERS_CHANNEL", "value": "email", "episode_id": ep}]})
    assert r.status_code == 200, r.text
    return r.json()["outcomes"][0]["fact_id"]


def test_a_user_id_with_invisible_characters_at_its_ends_is_the_same_user(client_for, tenant):
    agent = client_for(tenant, "agent")
    ep = _episode(agent, "u1", "s1")
    fact = _own_fact(agent, ep, "Uma Lind", "u1")
    u1 = "u1\u200b"

    memories = agent.get("/v1/memories", params={"user_id": u1})
    assert memories.status_code == 200, memories.text
    assert [m["fact"]["id"] for m in memories.json()["items"]] == [fact], memories.text
    assert agent.get("/v1/memories/export", params={"user_id": "\ufeffu1"}).json()["facts"], "export"
    sessions = agent.get("/v1/sessions", params={"user_id": u1}).json()["items"]
    assert [s["id"] for s in sessions] == ["s1"], sessions

    consent = agent.put("/v1/consent", json={"scope": "user", "user_id": u1, "share_preferences": True})
    assert consent.status_code == 200 and consent.json()["user_id"] == "u1", consent.text
    listed = agent.get("/v1/consent", params={"user_id": "u1"}).json()
    assert [c["user_id"] for c in listed if c["scope"] == "user"] == ["u1"], listed

    turn = agent.post("/v1/sessions/s1/turns", json={"idempotency_key": "t1", "user_id": u1, "episodes": [
        {"role": "user", "content": "and sms on weekends", "occurred_at": T0}]})
    assert turn.status_code == 201, turn.text        # the session's own user, not another
    made = agent.post("/v1/sessions", json={"id": "s1", "user_id": "\ufeffu1"})
    assert made.status_code == 200, made.text

    done = agent.post("/v1/forget", json={"user_id": u1})
    assert done.status_code == 200, done.text
    counts = done.json()["counts"]
    assert (counts["episodes"], counts["entities"], counts["consents"], counts["sessions"]) == (2, 1, 1, 1), counts
    assert agent.get("/v1/entities", params={"name": "Uma Lind"}).json()["items"] == []
    assert agent.get(f"/v1/episodes/{ep}").status_code == 404


def test_a_user_id_sent_with_invisible_characters_is_reached_by_the_plain_one(client_for, tenant):
    agent = client_for(tenant, "agent")
    ep = _episode(agent, "\ufeffu2\u200b", "s2")
    fact = _own_fact(agent, ep, "Vic Noor", "u2\u200b")
    memories = agent.get("/v1/memories", params={"user_id": "u2"}).json()
    assert [m["fact"]["id"] for m in memories["items"]] == [fact], memories
    search = agent.post("/v1/search", json={"query": "prefers email", "user_id": "u2\u200b"})
    assert search.status_code == 200, search.text
    assert ep in {h["id"] for h in search.json()["hits"] if h["kind"] == "episode"}, search.text
    done = agent.post("/v1/forget", json={"user_id": "u2"})
    assert done.status_code == 200, done.text
    assert (done.json()["counts"]["episodes"], done.json()["counts"]["entities"]) == (1, 1), done.text
    assert agent.get("/v1/entities", params={"name": "Vic Noor"}).json()["items"] == []
