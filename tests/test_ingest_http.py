"""The episode, job and refusal routes on the real HTTP server: 201 vs 200 replays, batches, pagination, the tenant
from the key, problem+json errors naming the field, and jobs visible and retryable."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from graphmem.ingest.worker import Worker
from graphmem.models import EpisodeIn
from tests.ingest_fixture import LLM_TIMEOUT_S, tenant_strings

EP = {"kind": "message", "role": "user", "content": "Dana moved to Globex.", "occurred_at": "2024-05-01T09:00:00Z",
      "session_id": "s1", "user_id": "u1", "idempotency_key": "k1"}


def test_append_replay_get_and_list(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/episodes", json=EP)
    assert r.status_code == 201 and r.json()["created"] is True
    ep = r.json()["episode"]
    assert ep["extraction_status"] == "pending" and ep["tenant_id"] == tenant
    again = c.post("/v1/episodes", json=EP)
    assert again.status_code == 200 and again.json()["episode"]["id"] == ep["id"] and again.json()["created"] is False
    changed = c.post("/v1/episodes", json={**EP, "content": "changed"})   # a used key is not a new episode's key
    assert changed.status_code == 422 and changed.json()["field"] == "idempotency_key", changed.text
    assert c.get(f"/v1/episodes/{ep['id']}").json()["content"] == "Dana moved to Globex."
    r = c.post("/v1/episodes", json={**EP, "idempotency_key": "j", "kind": "json", "content": "not json 😀"})
    assert r.status_code == 422 and r.json()["field"] == "content", r.text   # refused now, not failed later
    r = c.post("/v1/episodes", json={**EP, "idempotency_key": "j", "kind": "json", "content": "[" * 5000})
    assert r.status_code == 422 and r.json()["field"] == "content", r.text
    r = c.post("/v1/episodes", json={**EP, "idempotency_key": "big", "content": "x" * 100_001})
    assert r.status_code == 422 and r.json()["field"] == "content", r.text   # one episode: the body's own field
    s9 = {**EP, "session_id": "s9"}
    twice = [{**s9, "idempotency_key": "dup", "content": "first"}, {**s9, "idempotency_key": "dup", "content": "2nd"}]
    r = c.post("/v1/episodes/batch", json={"episodes": twice})   # refused before anything is written
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].idempotency_key", r.text
    assert c.get("/v1/sessions/s9/episodes").status_code == 404          # nothing stored, no session created
    r = c.post("/v1/episodes/batch", json={"episodes": [{**s9, "idempotency_key": "fresh"}, {**EP, "content": "new"}]})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].idempotency_key", r.text
    assert c.get("/v1/sessions/s9/episodes").status_code == 404          # nothing stored, no session created   # the stored key is checked before any write
    r = c.post("/v1/episodes/batch", json={"episodes": [{**s9, "idempotency_key": "f2"}, {**EP, "idempotency_key": "o",
                                                                                        "user_id": "u2"}]})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].user_id", r.text   # s1 is u1's session
    assert c.get("/v1/sessions/s9/episodes").status_code == 404          # nothing stored, no session created
    fresh = [{**EP, "session_id": "s-new", "idempotency_key": "n1", "user_id": "ua"},   # creates s-new for ua
             {**EP, "session_id": "s-new", "idempotency_key": "n2", "user_id": "ub"}]
    r = c.post("/v1/episodes/batch", json={"episodes": fresh})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].user_id", r.text
    assert c.get("/v1/sessions/s-new/episodes").status_code == 404
    alone = {**EP, "session_id": None, "idempotency_key": "no-session", "user_id": "nu1"}
    assert c.post("/v1/episodes", json=alone).status_code == 201
    r = c.post("/v1/episodes", json={**alone, "user_id": None})     # no session to take the user from
    assert r.status_code == 422 and r.json()["field"] == "idempotency_key", r.text
    for change in ({"role": "assistant"}, {"speaker": "Bob"}, {"source": "inferred"}):   # not the same message
        r = c.post("/v1/episodes", json={**EP, **change})
        assert r.status_code == 422 and r.json()["field"] == "idempotency_key", (change, r.text)
    assert c.post("/v1/episodes", json={**EP, "occurred_at": "2024-05-01T09:00:05Z"}).status_code == 200  # a retry
    assert c.get(f"/v1/episodes/{ep['id']}").json()["id"] == ep["id"]
    s7 = {**EP, "session_id": "s7"}
    assert c.post("/v1/episodes", json={**s7, "idempotency_key": "s7-first"}).status_code == 201   # u1's session
    own = c.post("/v1/episodes", json={**s7, "idempotency_key": "no-user", "user_id": None}).json()["episode"]
    assert own["user_id"] == "u1"   # an episode of u1's session without a user_id is u1's
    assert c.post("/v1/episodes", json={**s7, "idempotency_key": "no-user", "user_id": None}).status_code == 200
    assert c.get(f"/v1/episodes/{own['id']}").json()["user_id"] == "u1"
    hits = c.post("/v1/search", json={"query": "Globex", "user_id": "u1", "targets": ["episode"]}).json()["hits"]
    assert own["id"] in [h["id"] for h in hits]

    batch = [{**EP, "idempotency_key": f"b{i}", "content": f"turn {i}",
              "occurred_at": f"2024-05-01T10:0{i}:00Z"} for i in range(5)]
    r = c.post("/v1/episodes/batch", json={"episodes": batch})
    assert r.status_code == 201 and [i["created"] for i in r.json()["items"]] == [True] * 5
    assert c.post("/v1/episodes/batch", json={"episodes": batch}).status_code == 200
    page = c.get("/v1/sessions/s1/episodes", params={"offset": 1, "limit": 3}).json()
    assert [e["content"] for e in page["items"]] == ["turn 0", "turn 1", "turn 2"]

    other = client_for(tenant + "-other")
    assert other.get(f"/v1/episodes/{ep['id']}").status_code == 404
    assert other.get("/v1/sessions/s1/episodes").status_code == 404     # like an unknown session


def test_bad_input_is_problem_json_naming_the_field(client_for, tenant):
    c = client_for(tenant)
    r = c.post("/v1/episodes", json={**EP, "occurred_at": "2024-05-01T09:00:00"})
    assert r.status_code == 422 and r.headers["content-type"].startswith("application/problem+json")
    assert r.json()["field"] == "occurred_at"
    r = c.post("/v1/episodes/batch", json={"episodes": [EP, {**EP, "content": ""}]})
    assert r.status_code == 422 and r.json()["field"] == "episodes[1].content"
    assert c.get("/v1/sessions/s1/episodes").status_code == 404          # nothing half-written, no session
    assert client_for(tenant, "analyst").post("/v1/episodes", json=EP).status_code == 403


def test_jobs_and_refusals_over_http(client_for, services, tenant):
    c = client_for(tenant)
    good = {**EP, "kind": "json", "idempotency_key": "j1", "content": json.dumps(
        {"object": "contact", "id": "c-1", "name": "Dana", "title": "CTO", "changed_at": "2024-01-01T00:00:00Z"})}
    secret = {**EP, "idempotency_key": "j3", "content": "my password is hunter2hunter2"}
    ids = [c.post("/v1/episodes", json=e).json()["episode"]["id"] for e in (good, secret)]
    # a json episode that does not parse is refused at intake now; one stored before that still fails its job
    old = EpisodeIn.model_construct(**{**EP, "kind": "json", "idempotency_key": "j2", "content": "{oops",
                                       "occurred_at": datetime(2024, 5, 1, 9, tzinfo=timezone.utc)})
    ids.insert(1, services.graph.append_episode(tenant, old)[0].id)
    Worker(services, tenants=[tenant]).run(until_idle=True)

    assert c.get(f"/v1/jobs/{ids[0]}").json()["status"] == "done"
    failed = c.get("/v1/jobs/failed").json()["items"]
    assert [j["episode_id"] for j in failed] == [ids[1]] and "not JSON" in failed[0]["reason"]
    r = c.post(f"/v1/jobs/{ids[1]}/retry")
    assert r.status_code == 200 and r.json()["status"] == "pending" and r.json()["attempts"] == 0
    conflict = c.post(f"/v1/jobs/{ids[0]}/retry")
    assert conflict.status_code == 409 and conflict.json()["field"] == "episode_id"
    assert c.get("/v1/jobs/nope").status_code == 404
    # the record of explicit facts has nothing to extract: its skipped job is not retried (it failed as "not JSON")
    made = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Rita Moss"},
                                                "predicate": "HAS_TITLE", "value": "Manager"}]}).json()
    record = c.get(f"/v1/facts/{made['outcomes'][0]['fact_id']}/provenance").json()["items"][0]["episode_id"]
    assert c.get(f"/v1/jobs/{record}").json()["reason"] == "explicit facts"
    r = c.post(f"/v1/jobs/{record}/retry")
    assert r.status_code == 409 and r.json()["field"] == "episode_id" and "explicit facts" in r.text, r.text
    assert c.get(f"/v1/jobs/{record}").json()["status"] == "skipped"

    refusals = c.get("/v1/refusals").json()["items"]
    assert [(r["reason"], r["episode_id"]) for r in refusals] == [("secret_redacted", ids[2])]
    assert "hunter2" not in json.dumps(refusals)
    assert client_for(tenant + "-x").get("/v1/refusals").json()["items"] == []


def test_a_free_text_password_with_a_comma_is_redacted_whole(client_for, db, tenant):
    """"password: hunter2,xyz9 and more" was stored as "password: [REDACTED:labelled_secret],xyz9 and more": the
    unquoted value stopped at the comma, and its tail reached the database and the episode's answer."""
    c = client_for(tenant)
    r = c.post("/v1/episodes", json={**EP, "idempotency_key": "pw", "content": "password: hunter2,xyz9 and more"})
    assert r.status_code == 201, r.text
    ep = r.json()["episode"]
    assert ep["content"] == "password: [REDACTED:labelled_secret] and more", ep
    assert c.get(f"/v1/episodes/{ep['id']}").json()["content"] == ep["content"]
    stored = "\n".join(tenant_strings(db, tenant))
    assert "xyz9" not in stored and "hunter2" not in stored
    refusals = c.get("/v1/refusals").json()["items"]
    assert [(x["reason"], x["episode_id"]) for x in refusals] == [("secret_redacted", ep["id"])]


def test_job_shows_disambiguation_and_retractions_over_http(client_for, make_services, fake_llm, tenant):
    """GET /v1/jobs/{id} reports what entity disambiguation did (mentions sent, linked, prompt version) and how
    many facts a CRM change retracted. The jobs are run by a worker configured with the scripted LLM."""
    from graphmem.models import EntityRef
    from tests.fake_openai import Reply, chat_completion_body

    c = client_for(tenant)
    llm = make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                        llm_max_retries=2)
    for name in ("Dana Smith", "Dana Lee"):
        llm.graph.upsert_entity(tenant, EntityRef(kind="Person", name=name))
    extraction = {"entities": [{"ref": "d", "kind": "Person", "name": "Dana"},
                               {"ref": "g", "kind": "Organization", "name": "Globex"}],
                  "facts": [{"subject": "d", "predicate": "WORKS_AT", "object": "g", "confidence": 0.9}]}

    def link_to_dana_lee(req) -> Reply:
        text = req.json()["messages"][0]["content"]
        mentions = json.loads(text.split("<<<MENTIONS\n", 1)[1].split("\nMENTIONS>>>", 1)[0])
        choices = [{"mention": m["mention"], "entity_id": next(x["id"] for x in m["candidates"]
                                                               if x["name"] == "Dana Lee")} for m in mentions]
        return Reply(200, chat_completion_body(json.dumps({"choices": choices})))
    fake_llm.script("/v1/chat/completions", Reply(200, chat_completion_body(json.dumps(extraction))),
                    link_to_dana_lee)
    text_id = c.post("/v1/episodes", json={**EP, "idempotency_key": "d1", "content": "Dana moved to Globex."}
                     ).json()["episode"]["id"]
    crm = [{"object": "deal", "id": "d-1", "name": "Globex renewal", "owner": owner, "owner_id": owner_id,
            "stage": "proposal", "changed_at": ts}
           for owner, owner_id, ts in [("Dana Lee", "u-1", "2024-01-01T00:00:00Z"),
                                       ("Bob Stone", "u-2", "2024-02-01T00:00:00Z")]]
    crm_ids = [c.post("/v1/episodes", json={**EP, "kind": "json", "idempotency_key": f"crm{i}",
                                             "content": json.dumps(r)}).json()["episode"]["id"]
               for i, r in enumerate(crm)]
    Worker(llm, tenants=[tenant]).run(until_idle=True)

    job = c.get(f"/v1/jobs/{text_id}").json()
    assert job["status"] == "done" and job["extractor"] == "llm"
    assert (job["disambiguation_mentions"], job["disambiguation_linked"], job["disambiguation_prompt_version"]) == \
        (1, 1, "disambiguate_v1")
    assert job["facts_retracted"] == 0
    first, second = (c.get(f"/v1/jobs/{i}").json() for i in crm_ids)
    assert (first["facts_retracted"], second["facts_retracted"]) == (0, 1)      # Bob displaced Dana as owner
    assert second["disambiguation_mentions"] == 0 and second["disambiguation_prompt_version"] is None
