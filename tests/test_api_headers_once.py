"""A header an operation reads one value of (`Idempotency-Key`, `If-Match`) sent twice is a 422 naming it, as a
single-valued query parameter given twice is: the server read the first line and dropped the other without a word
(helper-found: `Idempotency-Key: k` then `Idempotency-Key: other` replayed the call stored under k, and a pin write
with `If-Match: "2"` and `If-Match: "7"` wrote at version 2)."""
from __future__ import annotations

FACT = {"subject": {"kind": "Person", "name": "Twice Keyed"}, "predicate": "HAS_TITLE", "value": "CTO"}


def test_an_idempotency_key_sent_twice_is_a_422_and_writes_nothing(client_for, tenant):
    c = client_for(tenant)
    for values in (("k-1", "k-2"), ("k-1", "k-1")):
        r = c.post("/v1/facts", json={"facts": [FACT]}, headers=[("Idempotency-Key", v) for v in values])
        assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", (values, r.text)
        assert "more than once" in r.json()["detail"], r.text
    assert c.get("/v1/entities", params={"name": "Twice Keyed"}).json()["items"] == []   # nothing written
    r = c.post("/v1/facts", json={"facts": [FACT]}, headers={"Idempotency-Key": "k-1"})
    assert r.status_code == 200, r.text
    fid = r.json()["outcomes"][0]["fact_id"]
    # the replay that the first header named is not given either: the call is refused whole
    r = c.post("/v1/facts", json={"facts": [FACT]}, headers=[("Idempotency-Key", "k-1"), ("Idempotency-Key", "k-9")])
    assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", r.text
    for route, body in ((f"/v1/facts/{fid}/correct", {"value": "CEO"}),
                        ("/v1/facts/retract", {"subject_id": "x", "predicate": "HAS_TITLE"})):
        r = c.post(route, json=body, headers=[("Idempotency-Key", "c-1"), ("Idempotency-Key", "c-2")])
        assert r.status_code == 422 and r.json()["field"] == "Idempotency-Key", (route, r.text)
    assert c.get(f"/v1/facts/{fid}").json()["status"] == "current"   # not corrected


def test_an_if_match_sent_twice_is_a_422_and_leaves_the_pin(client_for, tenant):
    c = client_for(tenant)
    turn = {"idempotency_key": "t-1", "user_id": "u1",
            "episodes": [{"content": "order A-1", "occurred_at": "2024-09-02T10:00:00Z"}],
            "pins": [{"key": "order_id", "value": {"type": "order_id", "value": "A-1"}}]}
    assert c.post("/v1/sessions/s1/turns", json=turn).status_code == 201
    pin = "/v1/sessions/s1/pins/order_id"
    r = c.put(pin, json={"value": {"type": "order_id", "value": "A-2"}},
              headers=[("If-Match", '"1"'), ("If-Match", '"7"')])
    assert r.status_code == 422 and r.json()["field"] == "If-Match", r.text
    r = c.delete(pin, headers=[("If-Match", '"1"'), ("If-Match", '"1"')])
    assert r.status_code == 422 and r.json()["field"] == "If-Match", r.text
    got = c.get(pin).json()
    assert got["version"] == 1 and got["value"]["value"] == "A-1", got
    # one If-Match still works, and the API key's own headers keep their rule (the same key twice is one key)
    r = c.put(pin, json={"value": {"type": "order_id", "value": "A-2"}}, headers={"If-Match": '"1"'})
    assert r.status_code == 200 and r.json()["version"] == 2, r.text
    key = c.headers["Authorization"]
    r = c.get(pin, headers=[("Authorization", key), ("Authorization", key)])
    assert r.status_code == 200, r.text


def test_a_content_type_sent_twice_is_a_422_naming_it_and_writes_nothing(client_for, tenant):
    """Only the first Content-Type line counted (`application/json`, `text/plain` read as JSON): a 422 naming it."""
    import json
    c = client_for(tenant)
    body = json.dumps({"facts": [FACT]}).encode()
    for values in (("application/json", "text/plain"), ("application/json", "application/json")):
        r = c.post("/v1/facts", content=body, headers=[("Content-Type", v) for v in values])
        assert r.status_code == 422 and r.json()["field"] == "Content-Type", (values, r.text)
        assert r.headers["content-type"].startswith("application/problem+json"), r.headers
        assert "more than once" in r.json()["detail"], r.text
    assert c.get("/v1/entities", params={"name": "Twice Keyed"}).json()["items"] == []   # nothing written
    r = c.post("/v1/facts", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
