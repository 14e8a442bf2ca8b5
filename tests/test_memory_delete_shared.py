"""A user deleting a memory (DELETE /v1/memories/{fact_id}?user_id=) takes away their own word only: a fact another
user's episode also states stays, readable with that provenance alone, as forgetting the user (POST /v1/forget)
leaves it; a fact only the user's episodes state, or one about the user's own entity, goes.
Real HTTP server on loopback."""
from __future__ import annotations

SAID = "2024-05-01T09:00:00Z"


def _episode(c, user: str, session: str, content: str) -> str:
    r = c.post("/v1/episodes", json={"content": content, "occurred_at": SAID, "user_id": user, "session_id": session,
                                     "role": "user"})
    assert r.status_code == 201, r.text
    return r.json()["episode"]["id"]


def _fact(c, episode: str, subject: dict, predicate: str, value: str, **kw) -> str:
    r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": predicate, "value": value,
                                             "episode_id": episode, **kw}]})
    assert r.status_code == 200, r.text
    return r.json()["outcomes"][0]["fact_id"]


DANA = {"kind": "Person", "name": "Dana Reyes"}
ALEX = {"kind": "Person", "name": "Alex", "external_ids": ["user:u1"]}   # u1's own entity


def _story(c) -> dict[str, str]:
    """u2 says Dana prefers email (inferred, 0.6); u1 says it too, explicitly, and that it ends in 2025 (a
    duplicate's stated end closes the fact); u2 says u1's own entity prefers sms, u1 repeats it; u1 only says
    Dana's title. Returns the ids."""
    e2 = _episode(c, "u2", "s2", "I guess Dana likes email; Alex prefers sms")
    e1 = _episode(c, "u1", "s1", "Dana prefers email until 2025; I prefer sms; Dana is our CFO")
    shared = _fact(c, e2, DANA, "PREFERS_CHANNEL", "email", source="inferred", confidence=0.6)
    again = _fact(c, e1, DANA, "PREFERS_CHANNEL", "email", valid_to="2025-01-01T00:00:00Z")
    assert again == shared
    own = _fact(c, e2, ALEX, "PREFERS_CHANNEL", "sms")
    assert _fact(c, e1, ALEX, "PREFERS_CHANNEL", "sms") == own
    title = _fact(c, e1, DANA, "HAS_TITLE", "CFO")
    fact = c.get(f"/v1/facts/{shared}").json()
    assert fact["valid_to"] is not None and fact["source"] == "user_explicit", fact
    return {"e1": e1, "e2": e2, "shared": shared, "own": own, "title": title}


def _state(c, ids: dict[str, str]) -> dict:
    """What a reader sees of the shared fact afterwards, with the other facts' existence."""
    fact = c.get(f"/v1/facts/{ids['shared']}")
    assert fact.status_code == 200, fact.text
    prov = c.get(f"/v1/facts/{ids['shared']}/provenance").json()["items"]
    f = fact.json()
    return {"status": f["status"], "valid_to": f["valid_to"], "source": f["source"], "confidence": f["confidence"],
            "provenance": [p["episode_id"] == ids["e2"] for p in prov],
            "own": c.get(f"/v1/facts/{ids['own']}").status_code, "title": c.get(f"/v1/facts/{ids['title']}").status_code}


def test_deleting_a_memory_keeps_what_another_users_episode_states(client_for, tenant):
    agent = client_for(tenant, "agent")
    ids = _story(agent)

    r = agent.delete(f"/v1/memories/{ids['shared']}", params={"user_id": "u1"})
    assert r.status_code == 200, r.text
    counts = r.json()["counts"]
    assert (counts["facts"], counts["facts_kept"], counts["facts_reopened"], counts["episodes"]) == (0, 1, 1, 0), counts
    # readable, with u2's provenance only and u2's belief; the end u1 stated went with u1's word
    assert _state(agent, ids) == {"status": "current", "valid_to": None, "source": "inferred", "confidence": 0.6,
                                  "provenance": [True], "own": 200, "title": 200}
    assert ids["shared"] not in {m["fact"]["id"] for m in agent.get("/v1/memories", params={"user_id": "u1"})
                                 .json()["items"]}
    mine = {m["fact"]["id"]: m for m in agent.get("/v1/memories", params={"user_id": "u2"}).json()["items"]}
    assert [p["episode_id"] for p in mine[ids["shared"]]["provenance"]] == [ids["e2"]]
    assert mine[ids["shared"]]["other_sources"] == 0
    assert agent.get(f"/v1/episodes/{ids['e1']}").status_code == 200     # the user's episodes stay

    # a fact about the user's own entity goes, whoever else said it, as does one only the user said
    for fid in ("own", "title"):
        r = agent.delete(f"/v1/memories/{ids[fid]}", params={"user_id": "u1"})
        assert r.status_code == 200 and r.json()["counts"]["facts"] == 1, r.text
        assert agent.get(f"/v1/facts/{ids[fid]}").status_code == 404


def test_deleting_a_memory_leaves_the_fact_as_forgetting_the_user_does(client_for, tenant):
    deleted, forgot = client_for(tenant, "agent"), client_for(f"{tenant}-f", "agent")
    a, b = _story(deleted), _story(forgot)
    for fid in ("shared", "own", "title"):
        assert deleted.delete(f"/v1/memories/{a[fid]}", params={"user_id": "u1"}).status_code == 200
    assert forgot.post("/v1/forget", json={"user_id": "u1"}).status_code == 200
    assert _state(deleted, a) == _state(forgot, b) == {
        "status": "current", "valid_to": None, "source": "inferred", "confidence": 0.6, "provenance": [True],
        "own": 404, "title": 404}


def test_a_hold_on_the_user_refuses_the_deletion_and_one_on_the_other_user_does_not(client_for, tenant):
    admin = client_for("admin", "admin")
    held, other = client_for(tenant, "agent"), client_for(f"{tenant}-o", "agent")
    a, b = _story(held), _story(other)
    for t, user in ((tenant, "u1"), (f"{tenant}-o", "u2")):
        r = admin.post(f"/v1/admin/tenants/{t}/holds", json={"user_id": user, "reason": "case 2024-17"})
        assert r.status_code == 201, r.text
    refused = held.delete(f"/v1/memories/{a['shared']}", params={"user_id": "u1"})
    assert refused.status_code == 422 and refused.json()["field"] == "fact_id", refused.text
    assert len(held.get(f"/v1/facts/{a['shared']}/provenance").json()["items"]) == 2
    done = other.delete(f"/v1/memories/{b['shared']}", params={"user_id": "u1"})
    assert done.status_code == 200 and done.json()["counts"]["facts_kept"] == 1, done.text
    assert [p["episode_id"] for p in other.get(f"/v1/facts/{b['shared']}/provenance").json()["items"]] == [b["e2"]]


def test_a_hold_on_the_user_refuses_deleting_a_fact_about_them_that_only_another_user_states(client_for, tenant):
    """Helper-found: under a hold on u1, DELETE /v1/memories/{fact}?user_id=u1 of a fact about u1's own entity that
    only u2's episode states erased it (200, facts 1), though forgetting u1 is refused and the docs say a hold on the
    user refuses the deletion."""
    admin, agent = client_for("admin", "admin"), client_for(tenant, "agent")
    _episode(agent, "u1", "s1", "hello")
    said = _episode(agent, "u2", "s2", "Alex prefers sms")
    own = _fact(agent, said, ALEX, "PREFERS_CHANNEL", "sms")
    r = admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u1\u200b", "reason": "case 2024-17"})
    assert r.status_code == 201 and r.json()["target_id"] == "u1", r.text
    refused = agent.delete(f"/v1/memories/{own}", params={"user_id": "u1"})
    assert refused.status_code == 422 and refused.json()["field"] == "fact_id", refused.text
    assert agent.get(f"/v1/facts/{own}").status_code == 200
