"""An episode re-sent under its idempotency key once its retention has passed: the old one is expired (the
sweeper's cascade) in the write that stores the new one, which is created and extracted; nothing replays it."""
from __future__ import annotations

import json
from datetime import UTC, datetime

from graphmem.models import EpisodeIn
from tests.test_ingest_llm import PATH, ok, run

PAST = datetime(2020, 1, 1, tzinfo=UTC)
EPISODE = {"kind": "message", "role": "user", "content": "Zanzibar walrus invoice",
           "occurred_at": "2024-01-01T00:00:00Z"}


def _past_retention(db, *ids):
    """What the passage of the tenant's retention period does to episodes (test-only raw write)."""
    with db.driver.session() as s:
        s.run("MATCH (e:Episode) WHERE e.id IN $ids SET e.retain_until = $t", ids=list(ids), t=PAST)


def _nodes(db, ids):
    with db.driver.session() as s:
        return s.run("MATCH (e:Episode) WHERE e.id IN $ids RETURN collect(e.id) AS ids", ids=list(ids)).single()["ids"]


def _sweeps(db, tenant):
    with db.driver.session() as s:
        return s.run("MATCH (a:AuditRecord {tenant_id: $t, action: 'sweep'}) RETURN a.counts AS counts",
                     t=tenant).data()


def test_a_resent_episode_past_retention_is_created_anew_not_replayed(client_for, db, tenant):
    """Found by a helper: re-sending an episode whose retention had passed, under the same idempotency key, answered
    200 "not created" with the hidden episode's content (which every read already treated as gone), stored and
    extracted nothing until the sweep, and another body under the key was a 422. Now the old episode is expired,
    as the sweeper would, in the write that creates the new one: 201, a new id, a pending job; for one episode, a
    batch and a turn, whose receipt (naming the expired episode) is gone with it."""
    agent = client_for(tenant, "agent")
    one = agent.post("/v1/episodes", json={**EPISODE, "idempotency_key": "k1"})
    batch = agent.post("/v1/episodes/batch", json={"episodes": [
        {**EPISODE, "content": "Quokka harbour contract", "idempotency_key": "b1"},
        {**EPISODE, "content": "Dana Reyes moved to Globex", "idempotency_key": "b2"}]})
    turn = {"idempotency_key": "t1", "user_id": "u1",
            "episodes": [{"role": "user", "content": "Walrus parcel 4471 never arrived",
                          "occurred_at": "2024-01-01T00:00:00Z"}]}
    first_turn = agent.post("/v1/sessions/s1/turns", json=turn)
    assert one.status_code == batch.status_code == first_turn.status_code == 201, (one.text, batch.text)
    old = one.json()["episode"]["id"]
    old_b1, live_b2 = (i["episode"]["id"] for i in batch.json()["items"])
    [old_turn] = first_turn.json()["episode_ids"]
    _past_retention(db, old, old_b1, old_turn)
    for gone in (old, old_b1, old_turn):
        assert agent.get(f"/v1/episodes/{gone}").status_code == 404

    again = agent.post("/v1/episodes", json={**EPISODE, "idempotency_key": "k1"})
    assert again.status_code == 201 and again.json()["created"] is True, again.text
    new = again.json()["episode"]["id"]
    assert new != old and agent.get(f"/v1/episodes/{new}").status_code == 200
    assert agent.get(f"/v1/jobs/{new}").json()["status"] == "pending"

    other = agent.post("/v1/episodes/batch", json={"episodes": [    # another body under b1: no 422, it is gone
        {**EPISODE, "content": "Quokka harbour lease", "idempotency_key": "b1"},
        {**EPISODE, "content": "Dana Reyes moved to Globex", "idempotency_key": "b2"}]})
    assert other.status_code == 201, other.text
    (new_b1, c1), (b2, c2) = ((i["episode"]["id"], i["created"]) for i in other.json()["items"])
    assert (c1, c2) == (True, False) and new_b1 != old_b1 and b2 == live_b2
    assert other.json()["items"][0]["episode"]["content"] == "Quokka harbour lease"

    resent = agent.post("/v1/sessions/s1/turns", json=turn)
    assert resent.status_code == 201 and not resent.json()["replayed"], resent.text
    [new_turn] = resent.json()["episode_ids"]
    assert new_turn != old_turn and resent.json()["created"] == [True]
    assert [e["id"] for e in agent.get("/v1/sessions/s1/episodes").json()["items"]] == [new_turn]
    replay = agent.post("/v1/sessions/s1/turns", json=turn)         # and the new turn replays as any other
    assert replay.status_code == 200 and replay.json()["episode_ids"] == [new_turn], replay.text

    assert _nodes(db, [old, old_b1, old_turn]) == []          # expired, not only hidden
    sweeps = [json.loads(a["counts"]) for a in _sweeps(db, tenant)]
    assert len(sweeps) == 3 and all(s["episodes"] == 1 for s in sweeps), sweeps


def test_a_resent_episode_past_retention_is_extracted(llm_services, fake_llm, db, tenant):
    """The episode created anew is extracted by the worker (its content goes to the LLM once, as a new episode's)."""
    ep = EpisodeIn(kind="text", content="Zanzibar walrus invoice", occurred_at=PAST, idempotency_key="k1")
    [(first, _)] = llm_services.ingest.append_episodes(tenant, [ep], extract=False)
    _past_retention(db, first.id)
    [(again, created)] = llm_services.ingest.append_episodes(tenant, [ep])
    assert created and again.id != first.id and again.extraction_status == "pending"
    fake_llm.set_default(PATH, lambda req: ok({"entities": [], "facts": []}))
    run(llm_services, tenant)
    assert llm_services.ingest.job_status(tenant, again.id).status == "done"
    sent = [json.dumps(r.json()) for r in fake_llm.requests_for(PATH)]
    assert len(sent) == 1 and "Zanzibar walrus invoice" in sent[0]


def test_a_resent_episode_of_a_session_past_its_stamped_retention_is_created_anew(client_for, db, tenant):
    """Found by a helper: a session hidden by its `retain_until` (every read answers 404 for its episodes) but not
    idle by `last_active_at` + the tenant's `session_ttl_days` (a stamp a settings change has not restamped yet)
    was not expired by a write to it, so an episode, a batch or a turn re-sent under its key replayed the hidden
    episode. The re-send path uses the reads' condition: the session goes (the sweeper's cascade) and the re-send
    is stored anew."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 30}).status_code == 200
    one = agent.post("/v1/episodes", json={**EPISODE, "session_id": "s1", "idempotency_key": "k1"})
    turn = {"idempotency_key": "t1", "user_id": "u1",
            "episodes": [{"role": "user", "content": "Walrus parcel 4471 never arrived",
                          "occurred_at": "2024-01-01T00:00:00Z"}]}
    first_turn = agent.post("/v1/sessions/s2/turns", json=turn)
    assert one.status_code == first_turn.status_code == 201, (one.text, first_turn.text)
    old, [old_turn] = one.json()["episode"]["id"], first_turn.json()["episode_ids"]
    with db.driver.session() as s:      # a stamp already past, the session active a moment ago (test-only raw write)
        s.run("MATCH (x:Session {tenant_id: $t}) WHERE x.id IN ['s1', 's2'] SET x.retain_until = $p",
              t=tenant, p=PAST)
    for gone in (old, old_turn):
        assert agent.get(f"/v1/episodes/{gone}").status_code == 404

    again = agent.post("/v1/episodes", json={**EPISODE, "session_id": "s1", "idempotency_key": "k1"})
    assert again.status_code == 201 and again.json()["created"] is True, again.text
    assert again.json()["episode"]["id"] != old
    resent = agent.post("/v1/sessions/s2/turns", json=turn)
    assert resent.status_code == 201 and not resent.json()["replayed"], resent.text
    assert resent.json()["episode_ids"] != [old_turn]
    for sid, new in (("s1", again.json()["episode"]["id"]), ("s2", resent.json()["episode_ids"][0])):
        assert [e["id"] for e in agent.get(f"/v1/sessions/{sid}/episodes").json()["items"]] == [new]
    assert _nodes(db, [old, old_turn]) == []


def test_a_resent_key_of_an_episode_in_a_session_past_retention_names_nothing(client_for, db, tenant):
    """The key check sees what reads see: an episode whose session is past its `retain_until` is gone, so the
    same key sent with another session is no 422 (which told the caller a hidden episode exists); it is expired
    and the new one stored."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 30}).status_code == 200
    old = [agent.post("/v1/episodes", json={**EPISODE, "session_id": "s1", "idempotency_key": k}) for k in "ab"]
    assert [r.status_code for r in old] == [201, 201], [r.text for r in old]
    with db.driver.session() as s:      # test-only raw write, as above
        s.run("MATCH (x:Session {tenant_id: $t, id: 's1'}) SET x.retain_until = $p", t=tenant, p=PAST)
    for path, body in (("/v1/episodes", {**EPISODE, "session_id": "s9", "idempotency_key": "a"}),
                       ("/v1/episodes/batch", {"episodes": [{**EPISODE, "session_id": "s8",
                                                             "idempotency_key": "b"}]})):
        r = agent.post(path, json=body)
        assert r.status_code == 201, (path, r.text)
    assert _nodes(db, [r.json()["episode"]["id"] for r in old]) == []
