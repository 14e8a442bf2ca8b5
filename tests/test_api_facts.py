"""Fact and ontology routes through the real server on loopback, against the real Neo4j."""
from __future__ import annotations

import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import httpx

from api.idempotency import body_digest, call_key
from api.routes.facts import FactsAssert, FactsAsserted
from graphmem.ingest.secrets import luhn_ok
from graphmem.models import AssertOutcome, EpisodeIn
from tests.graph_fixture import tenant_labels, tenant_node_count

DANA = {"kind": "Person", "name": "Dana Reyes", "email": "dana@reyes.io"}
INITECH = {"kind": "Organization", "name": "Initech", "domain": "initech.com"}
GLOBEX = {"kind": "Organization", "name": "Globex", "domain": "globex.com"}


def _assert(client, *facts, **headers):
    r = client.post("/v1/facts", json={"facts": list(facts)}, headers=headers)
    assert r.status_code == 200, r.text
    return r.json()


def _dana_story(client):
    first = _assert(client, {"subject": DANA, "predicate": "WORKS_AT", "object": INITECH,
                             "valid_from": "2019-03-04T00:00:00Z"},
                    {"subject": DANA, "predicate": "HAS_TITLE", "value": "Account Executive",
                     "valid_from": "2019-03-04T00:00:00Z"})
    second = _assert(client, {"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX,
                              "valid_from": "2021-06-14T00:00:00Z"})
    return first, second


def test_assert_read_history_provenance(client_for, tenant):
    c = client_for(tenant)
    first, second = _dana_story(c)
    assert [o["action"] for o in first["outcomes"]] == ["created", "created"]
    assert first["episode_id"] and second["episode_id"] != first["episode_id"]
    assert second["outcomes"][0]["action"] == "superseded"
    initech_fact = first["outcomes"][0]["fact_id"]
    assert second["outcomes"][0]["closed_fact_id"] == initech_fact
    globex_fact = second["outcomes"][0]["fact_id"]

    fact = c.get(f"/v1/facts/{globex_fact}").json()
    assert fact["predicate"] == "WORKS_AT" and fact["status"] == "current" and "Globex" in fact["statement"]
    assert fact["valid_from"].startswith("2021-06-14") and fact["valid_to"] is None
    old = c.get(f"/v1/facts/{initech_fact}").json()
    assert old["status"] == "closed" and old["valid_to"].startswith("2021-06-14")

    history = c.get(f"/v1/facts/{globex_fact}/history").json()["items"]
    assert [h["id"] for h in history] == [initech_fact, globex_fact]

    prov = c.get(f"/v1/facts/{globex_fact}/provenance").json()["items"]
    assert [p["episode_id"] for p in prov] == [second["episode_id"]]
    assert prov[0]["episode_kind"] == "event" and "POST /v1/facts" in prov[0]["content"]
    job = c.get(f"/v1/jobs/{second['episode_id']}").json()        # nothing left to extract from that record
    assert (job["status"], job["reason"]) == ("skipped", "explicit facts")
    # that record names a call and a key, not what anyone said: search never returns it, by words or by seed
    assert c.post("/v1/search", json={"query": "API call POST facts by key", "k": 50}).json()["hits"] == []
    hits = c.post("/v1/search", json={"query": "Dana", "seed_entity_ids": [fact["subject_id"]], "k": 50}).json()["hits"]
    assert {h["kind"] for h in hits} == {"fact", "entity"}, hits

    # the entity's facts: now, in the past, every version, one predicate, paginated
    dana_id = fact["subject_id"]
    now = c.get("/v1/facts", params={"entity_id": dana_id}).json()["items"]
    assert sorted(f["predicate"] for f in now) == ["HAS_TITLE", "WORKS_AT"]
    assert [f["id"] for f in now if f["predicate"] == "WORKS_AT"] == [globex_fact]
    past = c.get("/v1/facts", params={"entity_id": dana_id, "as_of": "2020-01-01T00:00:00Z",
                                      "predicate": "works_at"}).json()["items"]
    assert [f["id"] for f in past] == [initech_fact]
    every = c.get("/v1/facts", params={"entity_id": dana_id, "include_superseded": "true",
                                       "predicate": "WORKS_AT"}).json()["items"]
    assert {f["id"] for f in every} == {initech_fact, globex_fact}
    page = c.get("/v1/facts", params={"entity_id": dana_id, "include_superseded": "true", "predicate": "WORKS_AT",
                                      "limit": 1, "offset": 1}).json()
    assert page["limit"] == 1 and page["offset"] == 1 and [f["id"] for f in page["items"]] == [every[1]["id"]]


def test_known_at_sees_what_we_believed_before_a_correction(client_for, tenant):
    c = client_for(tenant)
    out = _assert(c, {"subject": DANA, "predicate": "HAS_TITLE", "value": "Account Executive",
                      "valid_from": "2019-03-04T00:00:00Z"})
    wrong = out["outcomes"][0]["fact_id"]
    dana_id = c.get(f"/v1/facts/{wrong}").json()["subject_id"]
    before = c.get(f"/v1/facts/{wrong}").json()["recorded_at"]
    r = c.post(f"/v1/facts/{wrong}/correct", json={"value": "Senior Account Executive"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["action"] == "corrected" and body["closed_fact_id"] == wrong
    right = c.get(f"/v1/facts/{body['fact_id']}").json()
    assert right["value"] == "Senior Account Executive" and right["source"] == "user_explicit"
    assert c.get(f"/v1/facts/{wrong}").json()["status"] == "corrected"
    now = c.get("/v1/facts", params={"entity_id": dana_id}).json()["items"]
    assert [f["id"] for f in now] == [right["id"]]
    then = c.get("/v1/facts", params={"entity_id": dana_id, "known_at": before}).json()["items"]
    assert [f["id"] for f in then] == [wrong] and then[0]["status"] == "current"   # as it was believed then
    roles = [p["role"] for p in c.get(f"/v1/facts/{wrong}/provenance").json()["items"]]
    assert roles == ["assertion", "correction"]
    # a second correction of the same fact is refused, naming the field
    again = c.post(f"/v1/facts/{wrong}/correct", json={"value": "CEO"})
    assert again.status_code == 422 and again.json()["field"] == "fact_id"
    blank = c.post(f"/v1/facts/{right['id']}/correct", json={"value": "   "})
    assert blank.status_code == 422 and blank.json()["field"] == "value", blank.text
    assert c.get(f"/v1/facts/{right['id']}").json()["status"] == "current"    # nothing half-written


def test_retract_closes_with_provenance(client_for, tenant):
    c = client_for(tenant)
    out = _assert(c, {"subject": DANA, "predicate": "PREFERS_CHANNEL", "value": "phone",
                      "valid_from": "2023-06-20T00:00:00Z"})
    fid = out["outcomes"][0]["fact_id"]
    dana_id = c.get(f"/v1/facts/{fid}").json()["subject_id"]
    r = c.post("/v1/facts/retract", json={"subject_id": dana_id, "predicate": "PREFERS_CHANNEL", "value": "phone"})
    assert r.status_code == 200, r.text
    assert r.json()["fact_ids"] == [fid]
    fact = c.get(f"/v1/facts/{fid}").json()
    assert fact["status"] == "retracted" and fact["valid_to"] is not None
    assert c.get("/v1/facts", params={"entity_id": dana_id}).json()["items"] == []
    prov = c.get(f"/v1/facts/{fid}/provenance").json()["items"]
    assert [p["role"] for p in prov] == ["assertion", "retraction"]
    assert prov[1]["episode_id"] == r.json()["episode_id"]
    # nothing left to retract
    again = c.post("/v1/facts/retract", json={"subject_id": dana_id, "predicate": "PREFERS_CHANNEL"})
    assert again.status_code == 404 and again.headers["content-type"] == "application/problem+json"
    assert again.json()["field"] == "predicate", again.text
    # a value that matches no fact names the value, not the predicate (helper-found)
    _assert(c, {"subject": DANA, "predicate": "HAS_TITLE", "value": "CFO"})
    nope = c.post("/v1/facts/retract", json={"subject_id": dana_id, "predicate": "HAS_TITLE", "value": "Nope"})
    assert nope.status_code == 404 and nope.json()["field"] == "value", nope.text
    assert "no HAS_TITLE fact with this value" in nope.json()["detail"], nope.text
    for predicate in ("prefers channel", "NOPE_X"):   # cannot exist / not in the ontology: a 422, not "nothing found"
        bad = c.post("/v1/facts/retract", json={"subject_id": dana_id, "predicate": predicate})
        assert bad.status_code == 422 and bad.json()["field"] == "predicate", bad.text
    # what the retraction names is checked, and the error names it (helper-found: each was a 404 naming predicate)
    for body, status, field in (({"predicate": "KNOWS", "object_id": "no-such-entity"}, 404, "object_id"),
                                ({"predicate": "KNOWS", "value": "Frank Wu"}, 422, "value"),
                                ({"predicate": "PREFERS_CHANNEL", "object_id": dana_id}, 422, "object_id")):
        bad = c.post("/v1/facts/retract", json={"subject_id": dana_id, **body})
        assert (bad.status_code, bad.json()["field"]) == (status, field), (body, bad.text)


def test_idempotency_key_makes_a_retry_harmless(client_for, tenant):
    c = client_for(tenant)
    fact = {"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX, "valid_from": "2021-06-14T00:00:00Z"}
    key = uuid.uuid4().hex
    one = _assert(c, fact, **{"Idempotency-Key": key})
    two = _assert(c, fact, **{"Idempotency-Key": key})
    assert two == one and one["outcomes"][0]["action"] == "created"     # the first answer, replayed
    prov = c.get(f"/v1/facts/{one['outcomes'][0]['fact_id']}/provenance").json()["items"]
    assert len(prov) == 1
    # the same key with another body is not a retry: refused, nothing written
    r = c.post("/v1/facts", json={"facts": [{**fact, "object": {"kind": "Organization", "name": "Initech"}}]},
               headers={"Idempotency-Key": key})
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    # the key is the tenant's: another agent's API key (or this one's after a rotation) sending the same call gets
    # the first answer (helper-found: a 422, though the docs said shared); with another body it is refused too
    other = client_for(tenant)
    assert _assert(other, fact, **{"Idempotency-Key": key}) == one
    r = other.post("/v1/facts", json={"facts": [{**fact, "valid_from": "2021-06-15T00:00:00Z"}]},
                   headers={"Idempotency-Key": key})
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    assert len(c.get(f"/v1/facts/{one['outcomes'][0]['fact_id']}/provenance").json()["items"]) == 1
    # a key sent empty, blank or too long is refused as the body's idempotency_key is, named as the header is
    # (helper-found: an empty one was ignored and the call ran without a key; a long one named "idempotency-key");
    # so is one that is not printable ASCII: the server reads header bytes as latin-1, and a UTF-8 zero-width space
    # read that way passed as a key of three visible characters
    for bad in ("", "k" * 201, "\u200b".encode(), "caf\u00e9".encode(), b"a\tb"):
        r = c.post("/v1/facts", json={"facts": [{**fact, "object": {"kind": "Organization", "name": "Initech"}}]},
                   headers={"Idempotency-Key": bad})
        assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", (bad, r.text)
    dana = c.get(f"/v1/facts/{one['outcomes'][0]['fact_id']}").json()["subject_id"]
    assert [f["statement"] for f in c.get("/v1/facts", params={"entity_id": dana}).json()["items"]] == \
        ["Dana Reyes works at Globex"]
    # a retried correction or retraction replays its answer instead of failing
    title = _assert(c, {"subject": DANA, "predicate": "HAS_TITLE", "value": "CTO"})["outcomes"][0]["fact_id"]
    fix = {"Idempotency-Key": uuid.uuid4().hex}
    first = c.post(f"/v1/facts/{title}/correct", json={"value": "CEO"}, headers=fix)
    again = c.post(f"/v1/facts/{title}/correct", json={"value": "CEO"}, headers=fix)
    assert first.status_code == again.status_code == 200 and first.json() == again.json(), again.text
    # a retry that arrives after the fact was corrected replays the first answer and leaves the correction be
    titled = {"Idempotency-Key": uuid.uuid4().hex}
    cfo = {"subject": {"kind": "Person", "name": "Ola Berg", "email": "ola@berg.no"}, "predicate": "HAS_TITLE",
           "value": "CFO", "valid_from": "2023-01-02T00:00:00Z"}
    said = _assert(c, cfo, **titled)
    fixed = c.post(f"/v1/facts/{said['outcomes'][0]['fact_id']}/correct", json={"value": "COO"}).json()
    assert _assert(c, cfo, **titled) == said
    ola = c.get(f"/v1/facts/{fixed['fact_id']}").json()["subject_id"]
    assert [(f["id"], f["value"], f["valid_to"]) for f in c.get("/v1/facts", params={"entity_id": ola}).json()["items"]] \
        == [(fixed["fact_id"], "COO", None)]
    drop = {"Idempotency-Key": uuid.uuid4().hex}
    first = c.post("/v1/facts/retract", json={"subject_id": dana, "predicate": "WORKS_AT"}, headers=drop)
    again = c.post("/v1/facts/retract", json={"subject_id": dana, "predicate": "WORKS_AT"}, headers=drop)
    assert first.status_code == again.status_code == 200 and first.json() == again.json(), again.text
    assert first.json()["fact_ids"] == [one["outcomes"][0]["fact_id"]]


def test_a_call_record_is_never_taken_for_a_secret(client_for, tenant):
    """The record of an idempotent call names a digest of its body; one whose first 16 hex digits were all digits
    passing the Luhn check (about one call in 20,000) was redacted as a card number: a refusal was recorded, the
    record lost its digest, and the same call sent under another API key of the tenant was refused as another body."""
    def digest(fact: dict) -> str:
        return body_digest(FactsAssert.model_validate({"facts": [fact]}))
    fact = next(f for f in ({"subject": DANA, "predicate": "HAS_TITLE", "value": f"Title {i}"} for i in range(10 ** 6))
                if digest(f)[:16].isdigit() and luhn_ok(digest(f)[:16]))
    key = {"Idempotency-Key": uuid.uuid4().hex}
    one = _assert(client_for(tenant), fact, **key)
    assert _assert(client_for(tenant), fact, **key) == one          # the same call under another API key: replayed
    c = client_for(tenant)
    assert c.get("/v1/refusals").json()["items"] == []
    content = c.get(f"/v1/episodes/{one['episode_id']}").json()["content"]
    assert content.endswith(f" (request {digest(fact)[:32]})") and "REDACTED" not in content, content


def test_a_call_recorded_with_the_shorter_digest_is_still_replayed(client_for, services, tenant):
    """Records written before the digest grew to 32 hex digits name 16: the same call sent again under another API
    key of the tenant is still that call (replayed), not another body."""
    fact = {"subject": DANA, "predicate": "HAS_TITLE", "value": "CFO"}
    idem = uuid.uuid4().hex
    digest = body_digest(FactsAssert.model_validate({"facts": [fact]}))
    first_key = services.keys.create(tenant, "agent", "before the upgrade")[0]
    ep, _ = services.ingest.append_episodes(tenant, [EpisodeIn(
        kind="event", source="system", role="system", occurred_at=datetime.now(timezone.utc),
        content=f"API call POST /v1/facts by key {first_key.id} (request {digest[:16]})",
        idempotency_key=call_key("POST /v1/facts", idem))], extract=False, searchable=False, batch=False)[0]
    kept = FactsAsserted(outcomes=[AssertOutcome(action="created", fact_id="0" * 32)], episode_id=ep.id)
    services.graph.keep_call_result(tenant, ep.id, kept.model_dump_json())
    assert _assert(client_for(tenant), fact, **{"Idempotency-Key": idem}) == kept.model_dump(mode="json")


def test_idempotency_key_holds_for_writes_that_name_their_episode(client_for, tenant):
    """helper-found: with every fact naming its episode the key was ignored, so the same key with another body
    answered "superseded" and replaced the title; correct and retract with an episode_id did the same."""
    c = client_for(tenant)
    r = c.post("/v1/episodes", json={"kind": "message", "role": "user", "content": "Vera is our CFO.",
                                     "occurred_at": "2024-05-01T09:00:00Z", "idempotency_key": "vera-1"})
    ep = r.json()["episode"]["id"]
    vera = {"kind": "Person", "name": "Vera Holm", "email": "vera@holm.se"}
    cfo = {"subject": vera, "predicate": "HAS_TITLE", "value": "CFO", "episode_id": ep}
    key = {"Idempotency-Key": uuid.uuid4().hex}
    one = _assert(c, cfo, **key)
    assert one["episode_id"] is None and one["outcomes"][0]["action"] == "created"   # provenance: the episode named
    assert _assert(c, cfo, **key) == one
    r = c.post("/v1/facts", json={"facts": [{**cfo, "value": "Intern"}]}, headers=key)
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    fact = one["outcomes"][0]["fact_id"]
    subject = c.get(f"/v1/facts/{fact}").json()["subject_id"]
    assert [f["value"] for f in c.get("/v1/facts", params={"entity_id": subject}).json()["items"]] == ["CFO"]
    assert [p["episode_id"] for p in c.get(f"/v1/facts/{fact}/provenance").json()["items"]] == [ep]

    fix = {"Idempotency-Key": uuid.uuid4().hex}
    first = c.post(f"/v1/facts/{fact}/correct", json={"value": "CEO", "episode_id": ep}, headers=fix)
    assert first.status_code == 200, first.text
    assert c.post(f"/v1/facts/{fact}/correct", json={"value": "CEO", "episode_id": ep}, headers=fix).json() \
        == first.json()
    r = c.post(f"/v1/facts/{fact}/correct", json={"value": "COO", "episode_id": ep}, headers=fix)
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    drop = {"Idempotency-Key": uuid.uuid4().hex}
    gone = c.post("/v1/facts/retract", json={"subject_id": subject, "predicate": "HAS_TITLE", "episode_id": ep},
                  headers=drop)
    assert gone.status_code == 200 and gone.json() == {"fact_ids": [first.json()["fact_id"]], "episode_id": ep}
    r = c.post("/v1/facts/retract", json={"subject_id": subject, "predicate": "WORKS_AT", "episode_id": ep},
               headers=drop)
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    assert [(f["value"], f["status"]) for f in c.get("/v1/facts", params={"entity_id": subject, "include_superseded":
            True}).json()["items"]] == [("CEO", "retracted")], "nothing after the first correction and retraction"


def test_bad_facts_name_the_field_and_write_nothing(client_for, tenant, db):
    c = client_for(tenant)
    keys_only = tenant_node_count(db, tenant)  # the API key node and the audit record of its creation
    r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "works at", "value": "x"}]})
    assert r.status_code == 422 and r.json()["field"] == "facts[0].predicate"
    r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX},
                                            {"subject": DANA, "predicate": "NOT_A_PREDICATE", "value": "x"}]})
    assert r.status_code == 422 and r.json()["field"] == "facts[1].predicate"
    r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "value": "Globex",
                                             "object": GLOBEX}]})
    assert r.status_code == 422 and r.json()["field"].startswith("facts[0]")
    r = c.post("/v1/facts", json={"facts": []})
    assert r.status_code == 422 and r.json()["field"] == "facts"
    for subject, field in (({**DANA, "name": "Dana\x00Reyes"}, "facts[0].subject.name"),
                           ({**DANA, "aliases": ["D. Reyes", "Dana\nReyes"]}, "facts[0].subject.aliases[1]")):
        r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "WORKS_AT", "object": GLOBEX}]})
        assert r.status_code == 422 and r.json()["field"] == field, r.text
    for end in ("2021-01-01T00:00:00Z", "2020-06-01T00:00:00Z"):   # an empty interval, an end before the start
        r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX},
                                                {"subject": DANA, "predicate": "HAS_TITLE", "value": "CFO",
                                                 "valid_from": "2021-01-01T00:00:00Z", "valid_to": end}]})
        assert r.status_code == 422 and r.json()["field"] == "facts[1].valid_to", r.text
    r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX,
                                             "episode_id": "0" * 32}]})
    assert r.status_code == 404 and r.json()["field"] == "facts[0].episode_id"
    r = c.get("/v1/facts", params={"entity_id": "x", "as_of": "2020-01-01T00:00:00"})
    assert r.status_code == 422 and r.json()["field"] == "as_of"
    # refused after the call was recorded as an episode: that episode goes again
    for bad, status in (({"subject": {"id": "missing"}, "predicate": "WORKS_AT", "object": GLOBEX}, 404),
                        ({"subject": {"kind": "Organization", "name": "Acme"}, "predicate": "HAS_TITLE",
                          "value": "CFO"}, 422),
                        ({"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX, "episode_id": "nope"}, 404)):
        r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX}, bad]})
        assert r.status_code == status, r.text
    assert tenant_node_count(db, tenant) == keys_only == 2
    dana = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX}]}).json()
    fact_id = dana["outcomes"][0]["fact_id"]
    after_one = tenant_labels(db, tenant)
    r = c.post(f"/v1/facts/{fact_id}/correct", json={"value": "x" * 5000})
    assert r.status_code == 422, r.text
    r = c.post("/v1/facts/retract", json={"subject_id": c.get(f"/v1/facts/{fact_id}").json()["subject_id"],
                                          "predicate": "HAS_TITLE"})
    assert r.status_code == 404, r.text
    # a kind or name given beside an id is checked, as recall's selectors check it (it was ignored)
    dana_id = c.get(f"/v1/facts/{fact_id}").json()["subject_id"]
    for subject, field in (({"id": dana_id, "kind": "Organization"}, "facts[0].subject.kind"),
                           ({"id": dana_id, "name": "Someone Else"}, "facts[0].subject.name")):
        r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "HAS_TITLE", "value": "CFO"}]})
        assert r.status_code == 422 and r.json()["field"] == field and "Dana Reyes" in r.text, r.text
    assert tenant_labels(db, tenant) == after_one
    r = c.post("/v1/facts", json={"facts": [{"subject": {"id": dana_id, "kind": "Person", "name": "dana  REYES"},
                                             "predicate": "HAS_TITLE", "value": "CFO"}]})
    assert r.status_code == 200 and r.json()["outcomes"][0]["action"] == "created", r.text   # the name, normalised
    # a stored entity named by a strong identifier alone; one that matches nothing cannot be created nameless
    r = c.post("/v1/facts", json={"facts": [{"subject": {"email": DANA["email"]}, "predicate": "LOCATED_IN",
                                             "value": "Porto"}]})
    assert r.status_code == 200, r.text
    assert c.get(f"/v1/facts/{r.json()['outcomes'][0]['fact_id']}").json()["subject_id"] == dana_id
    after_one = tenant_labels(db, tenant)
    for subject, status, field in (({"email": "nobody@example.com"}, 404, "facts[0].subject"),
                                   ({"external_ids": ["crm:none"], "kind": "Person"}, 404, "facts[0].subject"),
                                   ({"email": DANA["email"], "kind": "Organization"}, 422, "facts[0].subject.kind"),
                                   ({"kind": "Person"}, 422, "facts[0].subject")):
        r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "HAS_TITLE", "value": "COO"}]})
        assert r.status_code == status and r.json()["field"] == field, r.text
    # a kind and name beside an identifier of an entity of another kind: refused, never merged into Dana
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Organization", "name": "Reyes Consulting",
                                                         "email": DANA["email"]},
                                             "predicate": "LOCATED_IN", "value": "Lisbon"}]})
    assert r.status_code == 422 and r.json()["field"] == "facts[0].subject.kind" and "Dana Reyes" in r.text, r.text
    assert tenant_labels(db, tenant) == after_one
    # an external id beside an email another entity holds: a 409 naming the email (it was a 422 naming the subject;
    # the email's entity was taken and the external id dropped before that), nothing moved or merged
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "Ola Berg", "email": "ola@berg.no",
                                                         "external_ids": ["crm:contact:ola"]},
                                             "predicate": "HAS_TITLE", "value": "CTO"}]})
    assert r.status_code == 200, r.text
    after_one = tenant_labels(db, tenant)
    r = c.post("/v1/facts", json={"facts": [{"subject": {"email": DANA["email"], "external_ids": ["crm:contact:ola"]},
                                             "predicate": "LOCATED_IN", "value": "Bergen"}]})
    assert r.status_code == 409 and r.json()["field"] == "facts[0].subject.email" and dana_id in r.text, r.text
    assert tenant_labels(db, tenant) == after_one
    assert c.get("/v1/entities", params={"name": "Ola Berg"}).json()["items"][0]["email"] == "ola@berg.no"
    # identifiers alone may name an entity the same batch creates, whichever comes first
    r = c.post("/v1/facts", json={"facts": [
        {"subject": {"external_ids": ["crm:s-1"]}, "predicate": "LOCATED_IN", "value": "Oslo"},
        {"subject": {"kind": "Person", "name": "Sam Lee", "email": "sam@lee.io", "external_ids": ["crm:s-1"]},
         "predicate": "HAS_TITLE", "value": "Engineer"},
        {"subject": {"email": "sam@lee.io"}, "predicate": "KNOWS", "object": {"id": dana_id}}]})
    assert r.status_code == 200, r.text
    subjects = {c.get(f"/v1/facts/{o['fact_id']}").json()["subject_id"] for o in r.json()["outcomes"]}
    assert len(subjects) == 1 and dana_id not in subjects
    after_one = tenant_node_count(db, tenant)
    c.post("/v1/facts/retract", json={"subject_id": c.get(f"/v1/facts/{fact_id}").json()["subject_id"],
                                      "predicate": "WORKS_AT"})
    assert tenant_node_count(db, tenant) == after_one + 1   # a retraction that happened keeps its episode
    # fields are named as the request names them
    r = c.post("/v1/facts/retract", json={"subject_id": "nope", "predicate": "WORKS_AT"})
    assert r.status_code == 404 and r.json()["field"] == "subject_id", r.text
    r = c.post(f"/v1/facts/{fact_id}/correct", json={"value": "x" * 5000})
    assert r.json()["field"] == "value", r.text
    for neither_or_both in ({}, {"value": "Globex", "object": GLOBEX}):
        r = c.post(f"/v1/facts/{fact_id}/correct", json=neither_or_both)
        assert r.status_code == 422 and r.json()["field"] == "value", r.text
    # a value where the predicate takes an entity names the value that was sent (helper-found: it named `object`)
    r = c.post(f"/v1/facts/{fact_id}/correct", json={"value": "Globex"})
    assert r.status_code == 422 and r.json()["field"] == "value" and r.json()["detail"] == \
        "value: WORKS_AT takes an entity of kind Organization as its object, not a literal value; give object", r.text
    r = c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX},
                                            {"subject": DANA, "predicate": "WORKS_AT", "value": "Globex"}]})
    assert r.status_code == 422 and r.json()["field"] == "facts[1].value", r.text
    assert c.get(f"/v1/facts/{fact_id}").json()["status"] == "retracted"   # as the retraction above left it
    r = c.get("/v1/facts", params={"entity_id": "x", "predicate": "has title"})
    assert r.status_code == 422 and r.json()["field"] == "predicate[0]", r.text


def test_other_tenants_ids_answer_like_unknown_ids(client_for, tenant):
    a = client_for(tenant)
    b = client_for(f"{tenant}-b")
    out = _assert(a, {"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX})
    fid = out["outcomes"][0]["fact_id"]
    dana_id = a.get(f"/v1/facts/{fid}").json()["subject_id"]
    unknown = uuid.uuid4().hex

    def same(path_a: str, path_u: str, method: str = "GET", json=None):
        ra = b.request(method, path_a, json=json)
        ru = b.request(method, path_u, json=json)
        assert ra.status_code == ru.status_code == 404, (ra.text, ru.text)
        ja, ju = ra.json(), ru.json()
        assert ja["title"] == ju["title"] and ja.get("field") == ju.get("field")
        assert ja["detail"].replace(fid, "ID").replace(dana_id, "ID") == ju["detail"].replace(unknown, "ID")

    same(f"/v1/facts/{fid}", f"/v1/facts/{unknown}")
    same(f"/v1/facts/{fid}/history", f"/v1/facts/{unknown}/history")
    same(f"/v1/facts/{fid}/provenance", f"/v1/facts/{unknown}/provenance")
    same(f"/v1/facts?entity_id={dana_id}", f"/v1/facts?entity_id={unknown}")
    same(f"/v1/facts/{fid}/correct", f"/v1/facts/{unknown}/correct", "POST", {"value": "x"})
    ra = b.post("/v1/facts/retract", json={"subject_id": dana_id, "predicate": "WORKS_AT"})
    assert ra.status_code == 404 and ra.json()["field"] == "subject_id"
    # and tenant A's fact is untouched
    assert a.get(f"/v1/facts/{fid}").json()["status"] == "current"


def test_ontology_predicates_per_tenant(client_for, tenant):
    c = client_for(tenant)
    page = c.get("/v1/ontology/predicates", params={"limit": 500}).json()
    names = [p["name"] for p in page["items"]]
    assert "WORKS_AT" in names and names == sorted(names) and "MENTORS" not in names
    mentors = {"name": "MENTORS", "cardinality": "multi", "subject_kinds": ["Person"], "object_kinds": ["Person"],
               "fact_class": "relationship", "template": "{subject} mentors {object}"}
    r = c.post("/v1/ontology/predicates", json=mentors)
    assert r.status_code == 201 and r.json()["name"] == "MENTORS"
    assert "MENTORS" in [p["name"] for p in c.get("/v1/ontology/predicates", params={"limit": 500}).json()["items"]]
    out = _assert(c, {"subject": DANA, "predicate": "MENTORS", "object": {"kind": "Person", "name": "Sam Carter"}})
    fact = c.get(f"/v1/facts/{out['outcomes'][0]['fact_id']}").json()
    assert fact["statement"] == "Dana Reyes mentors Sam Carter"
    # another tenant does not see it
    other = client_for(f"{tenant}-other")
    assert "MENTORS" not in [p["name"] for p in other.get("/v1/ontology/predicates",
                                                          params={"limit": 500}).json()["items"]]
    bad = c.post("/v1/ontology/predicates", json={**mentors, "fact_class": "gossip"})
    assert bad.status_code == 422 and bad.json()["field"] == "fact_class"
    bad = c.post("/v1/ontology/predicates", json={**mentors, "template": "{subject} {boss}"})
    assert bad.status_code == 422 and bad.json()["field"] == "template"
    bad = c.post("/v1/ontology/predicates", json={**mentors, "name": "mentors"})
    assert bad.status_code == 422 and bad.json()["field"] == "name"
    for field, odd in (("symmetric", "yes"), ("symmetric", 1), ("template", "   ")):   # found by a helper
        bad = c.post("/v1/ontology/predicates", json={**mentors, field: odd})
        assert bad.status_code == 422 and bad.json()["field"] == field, (field, odd, bad.text)
    # cannot hold both ways; one value at a time at both ends (MARRIED_TO) is not supported (helper-found: it left
    # an entity two current values)
    for odd in ({"object_kinds": ["literal"]}, {"object_kinds": ["Organization"]}, {"cardinality": "single"}):
        bad = c.post("/v1/ontology/predicates", json={**mentors, **odd, "symmetric": True})
        assert bad.status_code == 422 and bad.json()["field"] == "symmetric", (odd, bad.text)
    for ttl in (True, "30", 0, 36501, 10**9, 10**20):   # 10**9 days overflowed every later write of it (500)
        bad = c.post("/v1/ontology/predicates", json={**mentors, "ttl_days": ttl})
        assert bad.status_code == 422 and bad.json()["field"] == "ttl_days", (ttl, bad.text)
    for cls, sensitivity in (("relationship", "health"), ("health", "none"), ("finance", "legal")):
        bad = c.post("/v1/ontology/predicates", json={**mentors, "fact_class": cls, "sensitivity": sensitivity})
        assert bad.status_code == 422 and bad.json()["field"] == "sensitivity", bad.text   # one meaning of sensitive
    assert c.post("/v1/ontology/predicates", json={**mentors, "name": "HAS_ALLERGY", "object_kinds": ["literal"],
                                                   "fact_class": "health", "sensitivity": "health"}).status_code == 201
    analyst = client_for(tenant, "analyst")
    assert analyst.post("/v1/ontology/predicates", json=mentors).status_code == 403
    assert analyst.get("/v1/ontology/predicates").status_code == 200


def test_a_predicate_with_stored_facts_keeps_what_they_mean(client_for, tenant):
    """helper-found: a multi-valued predicate redefined as single-valued kept two current values for good, a
    literal one redefined as an entity's stranded its values (retract by value: 422), and any agent key replaced
    the shipped WORKS_AT for the whole tenant."""
    c, admin = client_for(tenant), client_for(tenant, "admin")
    tools = {"name": "USES_TOOL", "cardinality": "multi", "subject_kinds": ["Person"], "object_kinds": ["literal"],
             "fact_class": "preference", "template": "{subject} uses {object}"}
    assert c.post("/v1/ontology/predicates", json=tools).status_code == 201
    assert c.post("/v1/ontology/predicates", json={**tools, "cardinality": "single"}).status_code == 201  # no facts yet
    assert c.post("/v1/ontology/predicates", json=tools).status_code == 201
    for tool, year in (("Slack", 2020), ("Jira", 2021)):
        _assert(c, {"subject": DANA, "predicate": "USES_TOOL", "value": tool, "valid_from": f"{year}-01-01T00:00:00Z"})
    for change, field in (({"cardinality": "single"}, "cardinality"), ({"object_kinds": ["Tool"]}, "object_kinds"),
                          ({"object_kinds": ["literal", "Tool"]}, "object_kinds"),
                          ({"fact_class": "health", "sensitivity": "health"}, "fact_class")):
        r = admin.post("/v1/ontology/predicates", json={**tools, **change})
        assert r.status_code == 409 and r.json()["field"] == field, (change, r.text)
    # what only shapes the next writes may change
    r = c.post("/v1/ontology/predicates", json={**tools, "template": "{subject} works with {object}",
                                                "subject_kinds": ["Person", "Organization"], "ttl_days": 30})
    assert r.status_code == 201, r.text
    out = _assert(c, {"subject": DANA, "predicate": "USES_TOOL", "value": "Notion", "valid_from": "2022-01-01T00:00:00Z"})
    dana = c.get(f"/v1/facts/{out['outcomes'][0]['fact_id']}").json()["subject_id"]
    current = c.get("/v1/facts", params={"entity_id": dana, "predicate": "USES_TOOL"}).json()["items"]
    assert sorted(f["value"] for f in current) == ["Jira", "Notion", "Slack"]
    assert c.post("/v1/facts/retract", json={"subject_id": dana, "predicate": "USES_TOOL", "value": "Slack"}
                  ).status_code == 200
    # the shipped predicates: an agent may repeat one but not redefine it; an admin may while no fact needs it
    works_at = next(p for p in c.get("/v1/ontology/predicates", params={"limit": 500}).json()["items"]
                    if p["name"] == "WORKS_AT")
    assert c.post("/v1/ontology/predicates", json=works_at).status_code == 201
    r = c.post("/v1/ontology/predicates", json={**works_at, "cardinality": "multi"})
    assert r.status_code == 403 and "admin" in r.json()["detail"], r.text
    assert admin.post("/v1/ontology/predicates", json={**works_at, "template": "{subject} is with {object}"}
                      ).status_code == 201
    _assert(c, {"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX})
    r = admin.post("/v1/ontology/predicates", json={**works_at, "cardinality": "multi"})
    assert r.status_code == 409 and r.json()["field"] == "cardinality", r.text
    assert next(p for p in c.get("/v1/ontology/predicates", params={"limit": 500}).json()["items"]
                if p["name"] == "WORKS_AT")["cardinality"] == "single"


def test_write_policy_rejects_a_secret_and_keeps_the_rest(client_for, tenant):
    c = client_for(tenant)
    secret = "sk-proj-" + "A1b2C3d4" * 5
    out = _assert(c, {"subject": DANA, "predicate": "HAS_TITLE", "value": f"api key is {secret}"},
                  {"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX})
    rejected, created = out["outcomes"]
    assert rejected["action"] == "rejected" and rejected["fact_id"] is None and rejected["reason"]
    assert created["action"] == "created"
    dana_id = c.get(f"/v1/facts/{created['fact_id']}").json()["subject_id"]
    facts = c.get("/v1/facts", params={"entity_id": dana_id, "include_superseded": "true"}).text
    assert secret not in facts and "HAS_TITLE" not in facts


def test_a_long_idempotency_key_is_accepted(client_for, tenant):
    c = client_for(tenant)
    fact = {"subject": DANA, "predicate": "HAS_TITLE", "value": "CFO"}
    one = _assert(c, fact, **{"Idempotency-Key": "k" * 200})
    two = _assert(c, fact, **{"Idempotency-Key": "k" * 200})
    assert one["episode_id"] == two["episode_id"]
    r = c.post("/v1/facts", json={"facts": [fact]}, headers={"Idempotency-Key": "k" * 201})
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key"


def test_unknown_fields_in_a_write_are_refused_and_nothing_is_stored(client_for, tenant, db):
    """A misspelt field would be dropped and the rest stored as if it had not been sent (an episode at the wrong
    time, a fact with the default confidence): every write body refuses it with a 422 naming it, stores nothing."""
    c = client_for(tenant)
    admin = client_for("admin", "admin")
    before = tenant_node_count(db, tenant)
    when = "2024-03-01T09:00:00Z"
    cases = [
        (c, "/v1/episodes", {"content": "Dana joined Globex", "occurred_at": when, "occured_at": when}, "occured_at"),
        (c, "/v1/episodes/batch", {"episodes": [{"content": "x", "occurred_at": when, "sesion_id": "s1"}]},
         "episodes[0].sesion_id"),
        (c, "/v1/facts", {"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX, "confidance": 0.2}]},
         "facts[0].confidance"),
        (c, "/v1/facts", {"facts": [{"subject": {**DANA, "emial": "d@x.io"}, "predicate": "WORKS_AT",
                                     "object": GLOBEX}]}, "facts[0].subject.emial"),
        (c, "/v1/facts", {"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX}], "tenant_id": "x"},
         "tenant_id"),
        (c, "/v1/facts/retract", {"subject_id": "x", "predicate": "WORKS_AT", "valid_too": when}, "valid_too"),
        (c, "/v1/ontology/predicates", {"name": "MENTORS", "cardinality": "multi", "subject_kinds": ["Person"],
                                        "object_kinds": ["Person"], "fact_class": "relationship",
                                        "template": "{subject} mentors {object}", "tenant_id": "x"}, "tenant_id"),
        (c, "/v1/forget", {"user_id": "u1", "sesion_id": "s1"}, "sesion_id"),
        (admin, f"/v1/admin/tenants/{tenant}/keys", {"role": "agent", "nmae": "bot"}, "nmae"),
    ]
    for who, route, body, field in cases:
        r = who.post(route, json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (route, r.text)
        assert r.headers["content-type"].startswith("application/problem+json")
    r = c.put("/v1/pin-keys/tier", json={"key": "tier", "type": "custom", "value_type": "string", "descr": "x"})
    assert r.status_code == 422 and r.json()["field"] == "descr", r.text
    assert tenant_node_count(db, tenant) == before
    assert "MENTORS" not in [p["name"] for p in c.get("/v1/ontology/predicates", params={"limit": 500}).json()["items"]]


def test_an_entitys_facts_page_without_repeats_or_gaps(client_for, tenant):
    """Sixty people start at Initech in one call: their facts tie on predicate, valid_from and recorded_at, so
    only the id keeps pages of 7 from repeating or skipping one; the pages read together are the one big page."""
    c = client_for(tenant)
    people = [{"kind": "Person", "name": f"Worker {i:02d}", "email": f"w{i}@initech.com"} for i in range(60)]
    out = _assert(c, *({"subject": p, "predicate": "WORKS_AT", "object": INITECH,
                        "valid_from": "2022-01-03T00:00:00Z"} for p in people))
    initech = c.get(f"/v1/facts/{out['outcomes'][0]['fact_id']}").json()["object_id"]
    whole = c.get("/v1/facts", params={"entity_id": initech, "limit": 500}).json()["items"]
    assert len(whole) == 60 and {f["id"] for f in whole} == {o["fact_id"] for o in out["outcomes"]}
    paged = []
    for offset in range(0, 63, 7):
        page = c.get("/v1/facts", params={"entity_id": initech, "limit": 7, "offset": offset}).json()
        assert page["offset"] == offset and len(page["items"]) == min(7, max(0, 60 - offset))
        paged += [f["id"] for f in page["items"]]
    assert paged == [f["id"] for f in whole]


def _slowed(monkeypatch, obj, name: str, seconds: float = 0.3) -> None:
    """`obj.name` waits `seconds` before it writes: tries sent together all reach the write before the first commits."""
    inner = getattr(obj, name)

    def slow(*args, **kwargs):
        time.sleep(seconds)
        return inner(*args, **kwargs)
    monkeypatch.setattr(obj, name, slow)


def test_concurrent_retries_of_a_write_replay_the_first_answer(client_for, tenant, services, db, monkeypatch):
    """Tries of one call sent at once under one Idempotency-Key (a client that times out and retries, a proxy that
    repeats a request): the later ones wait for the first and replay its answer, as a retry after it would. Found by
    a helper: five retries of a retraction sent at once answered 404 to four of them (the first had retracted the
    fact), six of an assertion answered `duplicate` to five. The writes are slowed so that every try reaches them
    before the first one commits."""
    c = client_for(tenant)
    for obj, name in ((services.ingest, "assert_facts"), (services.graph, "correct"), (services.graph, "retract")):
        _slowed(monkeypatch, obj, name)

    def together(n: int, path: str, body: dict) -> list[httpx.Response]:
        key = {"Idempotency-Key": uuid.uuid4().hex}
        with ThreadPoolExecutor(n) as pool:
            return list(pool.map(lambda _: c.post(path, json=body, headers=key), range(n)))

    said = together(6, "/v1/facts", {"facts": [{"subject": DANA, "predicate": "HAS_TITLE", "value": "CTO"}]})
    assert [r.status_code for r in said] == [200] * 6, [r.text for r in said]
    assert {r.text for r in said} == {said[0].text} and said[0].json()["outcomes"][0]["action"] == "created"
    title = said[0].json()["outcomes"][0]["fact_id"]
    assert len(c.get(f"/v1/facts/{title}/provenance").json()["items"]) == 1    # one call recorded, not six

    fixed = together(5, f"/v1/facts/{title}/correct", {"value": "CEO"})
    assert [r.status_code for r in fixed] == [200] * 5, [r.text for r in fixed]
    assert {r.text for r in fixed} == {fixed[0].text} and fixed[0].json()["action"] == "corrected"

    dana = c.get(f"/v1/facts/{title}").json()["subject_id"]
    dropped = together(5, "/v1/facts/retract", {"subject_id": dana, "predicate": "HAS_TITLE"})
    assert [r.status_code for r in dropped] == [200] * 5, [r.text for r in dropped]
    assert {r.text for r in dropped} == {dropped[0].text}
    assert dropped[0].json()["fact_ids"] == [fixed[0].json()["fact_id"]]

    # tries of a call that fails: each answers the same error, and no record of the call is left behind (found by
    # a helper: of 20 such tries some answered 409, "keep failing", and one a 422 about the episode's own fields,
    # read while another try deleted it)
    before = tenant_node_count(db, tenant)
    failed = together(4, "/v1/facts/retract", {"subject_id": dana, "predicate": "HAS_TITLE"})
    assert [r.status_code for r in failed] == [404] * 4, [r.text for r in failed]
    failed = together(16, "/v1/facts", {"facts": [{"subject": {"id": "no-such-entity"}, "predicate": "HAS_TITLE",
                                                   "value": "CTO"}]})
    assert [r.status_code for r in failed] == [404] * 16, sorted({r.text[:200] for r in failed})
    assert tenant_node_count(db, tenant) == before


def test_a_predicate_stored_under_older_rules_does_not_lock_the_tenant_out(client_for, tenant, db):
    """Found by a helper: a tenant predicate stored before a rule was added (a blank template, refused since) made
    every ontology load a 422: fact writes, the predicate list and the sweeper failed for the tenant, and
    re-posting the predicate could not repair it. Stored predicates are read as stored."""
    from tests.test_governance_support import raw
    raw(db, "CREATE (:Predicate {tenant_id: $t, name: 'OLD_NOTE', cardinality: 'multi', subject_kinds: ['Person'], "
            "object_kinds: ['literal'], fact_class: 'observation', template: '   '})", t=tenant)
    c = client_for(tenant)
    r = c.get("/v1/ontology/predicates", params={"limit": 500})
    assert r.status_code == 200 and "OLD_NOTE" in [p["name"] for p in r.json()["items"]], r.text
    assert c.post("/v1/facts", json={"facts": [{"subject": DANA, "predicate": "WORKS_AT", "object": GLOBEX}]}) \
        .status_code in (200, 201)
    fixed = {"name": "OLD_NOTE", "cardinality": "multi", "subject_kinds": ["Person"], "object_kinds": ["literal"],
             "fact_class": "observation", "template": "{subject} noted {object}"}
    assert c.post("/v1/ontology/predicates", json=fixed).status_code == 201


def test_an_external_id_with_a_new_email_replaces_the_email(client_for, tenant):
    """A reference that names an entity by its external id and gives another email: the external record is the
    source of its email, so the new one replaces the old (it was dropped: 200, the entity kept the old email and
    the new one named nobody). The old one names nobody any more."""
    c = client_for(tenant)
    dana = {"kind": "Person", "name": "Dana Reyes", "email": "old@a.com", "external_ids": ["crm:contact:c1"]}
    _assert(c, {"subject": dana, "predicate": "HAS_TITLE", "value": "AE"})
    out = _assert(c, {"subject": {**dana, "email": "new@b.com"}, "predicate": "HAS_PHONE", "value": "456"})
    dana_id = c.get(f"/v1/facts/{out['outcomes'][0]['fact_id']}").json()["subject_id"]
    [ent] = c.get("/v1/entities", params={"name": "Dana Reyes"}).json()["items"]
    assert ent["id"] == dana_id and ent["email"] == "new@b.com"
    out = _assert(c, {"subject": {"email": "new@b.com"}, "predicate": "LOCATED_IN", "value": "Porto"})
    assert c.get(f"/v1/facts/{out['outcomes'][0]['fact_id']}").json()["subject_id"] == dana_id
    r = c.post("/v1/facts", json={"facts": [{"subject": {"email": "old@a.com"}, "predicate": "LOCATED_IN",
                                             "value": "Lisbon"}]})
    assert r.status_code == 404 and r.json()["field"] == "facts[0].subject", r.text
    # by name alone with another email it is still somebody else (a second Dana), as before
    _assert(c, {"subject": {"kind": "Person", "name": "Dana Reyes", "email": "other@c.com"}, "predicate": "HAS_TITLE",
                "value": "CFO"})
    assert sorted(e["email"] for e in c.get("/v1/entities", params={"name": "Dana Reyes"}).json()["items"]) == [
        "new@b.com", "other@c.com"]


def test_a_long_history_and_provenance_page_in_order(client_for, tenant):
    """A title changed 60 times (one call, so every version ties on recorded_at) and a fact said again by 12 calls:
    the history's and the provenance's pages, read with limit 7 or 5, are the one big page, in its order (history:
    oldest valid_from first; provenance: oldest recorded first), without a repeat or a gap. Both are paged in
    Neo4j (a timeline of 10,000 versions read whole took 3.2 s a page, 75 ms now)."""
    c = client_for(tenant)
    out = _assert(c, *({"subject": DANA, "predicate": "HAS_TITLE", "value": f"Title {i:02d}",
                        "valid_from": f"2020-{1 + i // 28:02d}-{1 + i % 28:02d}T00:00:00Z"} for i in range(60)))
    last = out["outcomes"][-1]["fact_id"]
    whole = c.get(f"/v1/facts/{last}/history", params={"limit": 500}).json()["items"]
    assert [f["value"] for f in whole] == [f"Title {i:02d}" for i in range(60)]
    paged = []
    for offset in range(0, 63, 7):
        page = c.get(f"/v1/facts/{last}/history", params={"limit": 7, "offset": offset}).json()
        assert page["offset"] == offset and len(page["items"]) == min(7, max(0, 60 - offset))
        paged += [f["id"] for f in page["items"]]
    assert paged == [f["id"] for f in whole]

    said = [_assert(c, {"subject": DANA, "predicate": "WORKS_AT", "object": INITECH,
                        "valid_from": "2019-03-04T00:00:00Z"}) for _ in range(12)]
    fact = said[0]["outcomes"][0]["fact_id"]
    assert {s["outcomes"][0]["fact_id"] for s in said} == {fact}
    whole = c.get(f"/v1/facts/{fact}/provenance", params={"limit": 500}).json()["items"]
    assert [p["episode_id"] for p in whole] == [s["episode_id"] for s in said]
    paged = []
    for offset in range(0, 15, 5):
        paged += [p["episode_id"] for p in c.get(f"/v1/facts/{fact}/provenance",
                                                 params={"limit": 5, "offset": offset}).json()["items"]]
    assert paged == [p["episode_id"] for p in whole]
