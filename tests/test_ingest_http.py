"""The episode, job and refusal routes on the real HTTP server: 201 vs 200 replays, batches, pagination, the tenant
from the key, problem+json errors naming the field, and jobs visible and retryable."""
from __future__ import annotations

import json

from graphmem.ingest.worker import Worker

EP = {"kind": "message", "role": "user", "content": "Dana moved to Globex.", "occurred_at": "2024-05-01T09:00:00Z",
      "session_id": "s1", "user_id": "u1", "idempotency_key": "k1"}


def test_append_replay_get_and_list(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/episodes", json=EP)
    assert r.status_code == 201 and r.json()["created"] is True
    ep = r.json()["episode"]
    assert ep["extraction_status"] == "pending" and ep["tenant_id"] == tenant
    again = c.post("/v1/episodes", json={**EP, "content": "changed"})
    assert again.status_code == 200 and again.json()["episode"]["id"] == ep["id"]
    assert again.json()["episode"]["content"] == "Dana moved to Globex."
    assert c.get(f"/v1/episodes/{ep['id']}").json()["id"] == ep["id"]

    batch = [{**EP, "idempotency_key": f"b{i}", "content": f"turn {i}",
              "occurred_at": f"2024-05-01T10:0{i}:00Z"} for i in range(5)]
    r = c.post("/v1/episodes/batch", json={"episodes": batch})
    assert r.status_code == 201 and [i["created"] for i in r.json()["items"]] == [True] * 5
    assert c.post("/v1/episodes/batch", json={"episodes": batch}).status_code == 200
    page = c.get("/v1/sessions/s1/episodes", params={"offset": 1, "limit": 3}).json()
    assert [e["content"] for e in page["items"]] == ["turn 0", "turn 1", "turn 2"]

    other = client_for(tenant + "-other")
    assert other.get(f"/v1/episodes/{ep['id']}").status_code == 404
    assert other.get("/v1/sessions/s1/episodes").json()["items"] == []


def test_bad_input_is_problem_json_naming_the_field(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/episodes", json={**EP, "occurred_at": "2024-05-01T09:00:00"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == "occurred_at"
    r = c.post("/v1/episodes/batch", json={"episodes": [EP, {**EP, "content": ""}]})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].content"
    assert c.get("/v1/sessions/s1/episodes").json()["items"] == []          # nothing half-written
    assert client_for(tenant, "analyst").post("/v1/episodes", json=EP).status_code == 403


def test_jobs_and_refusals_over_http(client_for, services, tenant):
    c = client_for(tenant)
    good = {**EP, "kind": "json", "idempotency_key": "j1", "content": json.dumps(
        {"object": "contact", "id": "c-1", "name": "Dana", "title": "CTO", "changed_at": "2024-01-01T00:00:00Z"})}
    bad = {**EP, "kind": "json", "idempotency_key": "j2", "content": "{oops"}
    secret = {**EP, "idempotency_key": "j3", "content": "my password is hunter2hunter2"}
    ids = [c.post("/v1/episodes", json=e).json()["episode"]["id"] for e in (good, bad, secret)]
    Worker(services, tenants=[tenant]).run(until_idle=True)

    assert c.get(f"/v1/jobs/{ids[0]}").json()["status"] == "done"
    failed = c.get("/v1/jobs/failed").json()["items"]
    assert [j["episode_id"] for j in failed] == [ids[1]] and "not JSON" in failed[0]["reason"]
    r = c.post(f"/v1/jobs/{ids[1]}/retry")
    assert r.status_code == 200 and r.json()["status"] == "pending" and r.json()["attempts"] == 0
    conflict = c.post(f"/v1/jobs/{ids[0]}/retry")
    assert conflict.status_code == 409 and conflict.json()["field"] == "episode_id"
    assert c.get("/v1/jobs/nope").status_code == 404

    refusals = c.get("/v1/refusals").json()["items"]
    assert [(r["reason"], r["episode_id"]) for r in refusals] == [("secret_redacted", ids[2])]
    assert "hunter2" not in json.dumps(refusals)
    assert client_for(tenant + "-x").get("/v1/refusals").json()["items"] == []
