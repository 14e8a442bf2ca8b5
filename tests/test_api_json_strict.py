"""JSON is RFC 8259 JSON everywhere a caller sends it: request bodies and the content of `json` episodes (CRM record
changes). Python's `json` module reads more than that (NaN, Infinity, -Infinity; 1e400 as inf) and fails on
some JSON with errors that are not `JSONDecodeError` (an integer of more than 4,300 digits, nesting deeper than its
recursion limit), which the API reported as a body "not UTF-8". Helper-found: a CRM record with `"amount": NaN`
was stored and mapped to the fact "... is worth nan EUR"."""
from __future__ import annotations

import httpx

JSON = {"content-type": "application/json"}
NOT_JSON = [b'{"query": "dana", "k": NaN}', b'{"query": "dana", "k": Infinity}', b'{"query": "dana", "k": -Infinity}',
            b'{"query": "dana", "min_similarity": 1e400}']


def test_a_body_with_nan_or_infinity_is_not_json(client_for, tenant):
    c = client_for(tenant)
    for content in NOT_JSON:
        r = c.post("/v1/search", content=content, headers=JSON)
        assert r.status_code == 422 and r.json()["field"] == "body", (content, r.text)
        assert "not valid JSON" in r.json()["detail"] and "UTF-8" not in r.json()["detail"], r.text
    # a fact's confidence of NaN was refused as "should be less than or equal to 1": refused as what it is now
    fact = (b'{"facts": [{"subject": {"kind": "Person", "name": "Nan Person"}, "predicate": "HAS_TITLE", '
            b'"value": "CTO", "confidence": NaN}]}')
    r = c.post("/v1/facts", content=fact, headers=JSON)
    assert r.status_code == 422 and r.json()["field"] == "body" and "NaN" in r.json()["detail"], r.text


def test_json_too_long_or_too_deep_is_named_as_such_not_as_utf8(client_for, tenant):
    c = client_for(tenant)
    for content, says in ((b'{"query": "dana", "k": ' + b"9" * 5000 + b"}", "digits"),
                          (b"[" * 100_000 + b"]" * 100_000, "nested")):
        r = c.post("/v1/search", content=content, headers=JSON)
        assert r.status_code == 422 and r.json()["field"] == "body", r.text
        assert says in r.json()["detail"] and "UTF-8" not in r.json()["detail"], r.text


def test_the_key_comes_before_a_body_that_cannot_be_read(api_url):
    """docs/http.md "Errors": the body checks come after the key (401), also for a body that is not JSON; a body not
    in UTF-8 answered a 422 to a caller without a key."""
    for content in ('{"query": "Jos\u00e9"}'.encode("latin-1"), b'{"query": "dana", "k": NaN}',
                    b'{"k": ' + b"9" * 5000 + b"}"):
        r = httpx.post(f"{api_url}/v1/search", content=content, headers=JSON)
        assert r.status_code == 401, (content[:30], r.text)


def test_a_json_episode_with_nan_or_infinity_is_refused_and_stores_nothing(client_for, tenant):
    c = client_for(tenant)
    for i, record in enumerate(('{"object": "deal", "id": "d-1", "name": "Nan Deal", "amount": NaN, "currency": "EUR"}',
                                '{"object": "deal", "id": "d-1", "name": "Nan Deal", "stage": Infinity}',
                                '{"object": "deal", "id": "d-1", "name": "Nan Deal", "amount": 1e400}')):
        ep = {"kind": "json", "content": record, "occurred_at": "2024-09-03T08:00:00Z", "idempotency_key": f"crm-{i}",
              "session_id": "crm"}
        r = c.post("/v1/episodes", json=ep)
        assert r.status_code == 422 and r.json()["field"] == "content", r.text
        r = c.post("/v1/sessions/crm/turns", json={"idempotency_key": f"t-{i}", "user_id": "u1", "episodes": [ep]})
        assert r.status_code == 422 and r.json()["field"] == "episodes[0].content", r.text
    assert c.get("/v1/sessions/crm/episodes").status_code == 404          # nothing stored, no session created
    assert c.get("/v1/entities", params={"name": "Nan Deal"}).json()["items"] == []
