"""An id in a query string must not be blank: a 422 naming it (the `VISIBLE` pattern's "must not be blank"), as a
search's `user_id` is, never a filter that matches nothing. Helper-found: `GET /v1/sessions?user_id=%20` and
`GET /v1/consent?user_id=%20` answered 200 with nothing. A `user_id` of the memory routes (a user's memories, their
export and candidates, deleting a memory) and an entity named by id or name in `from`, `to` (introductions) and
`org` (who-at) were refused by the services in other words ("user_id is required", "the name has no letters or
digits"); they now give the pattern's error as well."""
from __future__ import annotations

from tests.test_api_blank_entity_id import BLANKS, _refused


def _calls(b: str) -> list[tuple[str, str, str, dict]]:
    """(method, path, the field at fault, query parameters) of every query string with an id, `b` as that id."""
    return [("GET", "/v1/sessions", "user_id", {"user_id": b}), ("GET", "/v1/consent", "user_id", {"user_id": b}),
            ("GET", "/v1/memories", "user_id", {"user_id": b}), ("GET", "/v1/memories/export", "user_id", {"user_id": b}),
            ("GET", "/v1/memories/candidates", "user_id", {"user_id": b}),
            ("DELETE", "/v1/memories/f1", "user_id", {"user_id": b}),
            ("GET", "/v1/recall/introductions", "from", {"from": b, "to": "Globex"}),
            ("GET", "/v1/recall/introductions", "to", {"from": "Globex", "to": b}),
            ("GET", "/v1/recall/who-at", "org", {"org": b}), ("GET", "/v1/facts", "entity_id", {"entity_id": b})]


def test_a_blank_id_in_a_query_string_is_a_422_naming_it(client_for, tenant):
    c = client_for(tenant)
    assert c.post("/v1/sessions", json={"user_id": "u-query"}).status_code == 201
    for blank in BLANKS:
        for method, path, field, params in _calls(blank):
            _refused(c.request(method, path, params=params), field, (method, path, blank))
    assert [s["user_id"] for s in c.get("/v1/sessions", params={"user_id": "u-query"}).json()["items"]] == ["u-query"]
    assert c.get("/v1/sessions", params={"user_id": "nobody"}).json()["items"] == []    # unknown: nothing, a 200
