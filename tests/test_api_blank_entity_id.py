"""An entity id a search or a multi-hop call names must not be blank: a 422 naming the field, never a 404. Helper-found:
`"seed_entity_ids": [" "]` on `POST /v1/search` answered 404 "no entity ' '", and so did `" "` as an entity id in the
path of `GET /v1/entities/{entity_id}/paths/{other_id}`, `.../neighbourhood`, `GET /v1/entities/{entity_id}` and the
`entity_id` of `GET /v1/facts` (`""` was already a 422 where it can be sent)."""
from __future__ import annotations

from urllib.parse import quote

BLANKS = (" ", "   ", "\u200b", "\u3164")


def _refused(r, field: str, what) -> None:
    assert r.status_code == 422, (what, r.status_code, r.text)
    assert r.headers["content-type"].startswith("application/problem+json"), (what, r.headers)
    assert r.json()["field"] == field, (what, r.text)
    assert "must not be blank" in r.json()["detail"], (what, r.text)


def _person_at(c, name: str, org: str) -> str:
    """The id of person `name`, stored as working at `org`."""
    fact = {"subject": {"kind": "Person", "name": name}, "predicate": "WORKS_AT",
            "object": {"kind": "Organization", "name": org}}
    assert c.post("/v1/facts", json={"facts": [fact]}).status_code == 200
    return c.get("/v1/entities", params={"name": name}).json()["items"][0]["id"]


def test_a_blank_seed_entity_id_is_a_422_naming_it(client_for, tenant):
    c = client_for(tenant)
    sam = _person_at(c, "Seed Sam", "Seed Co")
    for blank in BLANKS:
        _refused(c.post("/v1/search", json={"query": "seed", "seed_entity_ids": [blank]}), "seed_entity_ids[0]", blank)
        _refused(c.post("/v1/search", json={"query": "seed", "seed_entity_ids": [sam, blank]}),
                 "seed_entity_ids[1]", blank)
    assert c.post("/v1/search", json={"query": "seed", "seed_entity_ids": [sam]}).status_code == 200
    r = c.post("/v1/search", json={"query": "seed", "seed_entity_ids": ["no-such-entity"]})
    assert r.status_code == 404 and r.json()["field"] == "seed_entity_ids[0]", r.text   # unknown stays a 404


def test_a_blank_entity_id_in_the_path_of_a_multi_hop_call_is_a_422_naming_it(client_for, tenant):
    c = client_for(tenant)
    pat = _person_at(c, "Path Pat", "Path Co")
    for blank in BLANKS:
        b = quote(blank)
        _refused(c.get(f"/v1/entities/{b}/paths/{pat}"), "entity_id", blank)
        _refused(c.get(f"/v1/entities/{pat}/paths/{b}"), "other_id", blank)
        _refused(c.get(f"/v1/entities/{b}/neighbourhood"), "entity_id", blank)
        _refused(c.get(f"/v1/entities/{b}"), "entity_id", blank)
        _refused(c.get("/v1/facts", params={"entity_id": blank}), "entity_id", blank)
    assert c.get(f"/v1/entities/{pat}/neighbourhood").json()["items"][0]["neighbour"]["name"] == "Path Co"
    r = c.get(f"/v1/entities/{pat}/paths/nobody")
    assert r.status_code == 404 and r.json()["field"] == "other_id", r.text                   # unknown stays a 404
