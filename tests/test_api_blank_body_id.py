"""An id in a request body must not be blank: a 422 naming the field (the `VISIBLE` pattern's "must not be blank"),
never a 404. Helper-found: `POST /v1/facts/retract` with `"subject_id": " "` answered 404 "no entity ' '", and so
did an entity reference's `id` (`facts[0].subject.id`). The user, session, episode and fact ids of
`POST /v1/forget` and of a legal hold, and the `user_id` of a new session and of a memory's correction,
confirmation and rejection, were refused by the services in other words ("user_id is required", "must not be
empty"); the body's model now refuses them all the same way."""
from __future__ import annotations

from tests.test_api_blank_entity_id import BLANKS, _refused


def _calls(tenant: str, b: str) -> list[tuple[str, str, str, dict]]:
    """(method, path, the field at fault, JSON body) of every body with an id field, `b` as that id."""
    retract = {"subject_id": b, "predicate": "PREFERS_CHANNEL"}
    calls = [("POST", "/v1/facts/retract", "subject_id", retract),
             ("POST", "/v1/sessions", "user_id", {"user_id": b}),
             ("POST", "/v1/memories/candidates/f1/confirm", "user_id", {"user_id": b}),
             ("POST", "/v1/memories/candidates/f1/reject", "user_id", {"user_id": b}),
             ("PATCH", "/v1/memories/f1", "user_id", {"user_id": b, "value": "x"}),
             ("POST", "/v1/facts", "facts[0].subject.id",
              {"facts": [{"subject": {"id": b}, "predicate": "PREFERS_CHANNEL", "value": "email"}]})]
    for field in ("user_id", "session_id", "episode_id", "fact_id"):
        calls.append(("POST", "/v1/forget", field, {field: b}))
    for field in ("user_id", "session_id", "episode_id"):
        calls.append(("POST", f"/v1/admin/tenants/{tenant}/holds", field, {field: b, "reason": "case 1"}))
    return calls


def test_a_blank_id_in_a_body_is_a_422_naming_it(client_for, tenant):
    c, admin = client_for(tenant), client_for(tenant, "admin")
    for blank in BLANKS:
        for method, path, field, body in _calls(tenant, blank):
            r = (admin if "/admin/" in path else c).request(method, path, json=body)
            _refused(r, field, (method, path, blank))
    assert c.get("/v1/sessions").json()["items"] == []                               # nothing written
    assert admin.get(f"/v1/admin/tenants/{tenant}/holds").json()["items"] == []
    r = c.post("/v1/facts/retract", json={"subject_id": "nobody", "predicate": "PREFERS_CHANNEL"})
    assert r.status_code == 404 and r.json()["field"] == "subject_id", r.text         # unknown stays a 404
