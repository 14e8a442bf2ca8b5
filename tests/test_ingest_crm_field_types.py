"""A CRM record's mapped fields are strings or numbers. Helper-found: a field holding a JSON object, array or
boolean was written into its fact or name with Python's repr: the title "{'a': 1}", the city "True", the phone
"['1', '2']", a contact named "{'first': 'A'}". Such a record now fails its job with a reason naming the field, and
writes nothing (no entity, no fact), as a record of an unknown type or an unreadable `changed_at` does."""
from __future__ import annotations

import json

from graphmem.ingest.worker import Worker


def test_a_record_field_holding_an_object_array_or_boolean_fails_its_job(client_for, services, tenant):
    c = client_for(tenant)
    records = [({"object": "contact", "id": "c-1", "name": "Obj Person", "title": {"a": 1}}, "title", "object"),
               ({"object": "contact", "id": "c-2", "name": "Obj Person", "city": True}, "city", "boolean"),
               ({"object": "contact", "id": "c-3", "name": "Obj Person", "phone": ["1", "2"]}, "phone", "array"),
               ({"object": "contact", "id": "c-4", "name": {"first": "A"}, "title": "CTO"}, "name", "object"),
               ([{"object": "account", "id": "a-1", "name": "Fine Account"},
                 {"object": "deal", "id": "d-1", "name": "Obj Deal", "amount": 5, "currency": False}],
                "currency", "boolean")]
    ids = []
    for i, (record, _, _) in enumerate(records):
        r = c.post("/v1/episodes", json={"kind": "json", "content": json.dumps(record), "idempotency_key": f"crm-{i}",
                                         "occurred_at": "2024-09-03T08:00:00Z"})
        assert r.status_code == 201, r.text
        ids.append(r.json()["episode"]["id"])
    Worker(services, tenants=[tenant]).run(until_idle=True)
    for episode_id, (_, field, kind) in zip(ids, records):
        job = c.get(f"/v1/jobs/{episode_id}").json()
        assert job["status"] == "failed", job
        assert repr(field) in job["reason"] and kind in job["reason"], job
    for name in ("Obj Person", "Fine Account", "Obj Deal", "first"):   # nothing written, not even the first record
        assert c.get("/v1/entities", params={"name": name}).json()["items"] == [], name
    # numbers and strings still map
    r = c.post("/v1/episodes", json={"kind": "json", "idempotency_key": "ok", "occurred_at": "2024-09-03T08:00:00Z",
                                     "content": json.dumps({"object": "deal", "id": "d-2", "name": "Fine Deal",
                                                            "amount": 150000, "currency": "EUR"})})
    Worker(services, tenants=[tenant]).run(until_idle=True)
    assert c.get(f"/v1/jobs/{r.json()['episode']['id']}").json()["status"] == "done"
    [deal] = c.get("/v1/entities", params={"name": "Fine Deal"}).json()["items"]
    [amount] = c.get("/v1/facts", params={"entity_id": deal["id"], "predicate": "DEAL_AMOUNT"}).json()["items"]
    assert amount["value"] == "150000 EUR"


def test_a_float_field_is_written_as_a_plain_decimal(client_for, services, tenant):
    """Helper-found: a JSON float was written with Python's float repr: "worth 1500000.0 EUR", "1e-07 EUR". An
    integral float is written as an integer, any other as a plain decimal without exponent."""
    c = client_for(tenant)
    cases = [("d-f1", 1500000.0, "1500000 EUR"), ("d-f2", 0.15, "0.15 EUR"), ("d-f3", 1e-07, "0.0000001 EUR"),
             ("d-f4", 2.5e20, "250000000000000000000 EUR"), ("d-f5", 1234.5, "1234.5 EUR")]
    for i, (did, amount, _) in enumerate(cases):
        content = f'{{"object": "deal", "id": "{did}", "name": "Float Deal {i}", "amount": {amount!r}, ' \
                  '"currency": "EUR"}'
        r = c.post("/v1/episodes", json={"kind": "json", "content": content, "idempotency_key": f"fl-{i}",
                                         "occurred_at": "2024-09-03T08:00:00Z"})
        assert r.status_code == 201, r.text
    Worker(services, tenants=[tenant]).run(until_idle=True)
    for i, (_, _, value) in enumerate(cases):
        [deal] = [e for e in c.get("/v1/entities", params={"name": f"Float Deal {i}"}).json()["items"]
                  if e["name"] == f"Float Deal {i}"]
        [fact] = c.get("/v1/facts", params={"entity_id": deal["id"], "predicate": "DEAL_AMOUNT"}).json()["items"]
        assert fact["value"] == value, fact
        assert fact["statement"] == f"Float Deal {i} is worth {value}", fact
