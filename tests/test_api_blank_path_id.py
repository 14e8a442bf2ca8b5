"""An id in a path must not be blank: a 422 naming it (the `VISIBLE` pattern), never a 404 "no fact ' '".
Helper-found: after entity ids (tests/test_api_blank_entity_id.py), `GET /v1/facts/%20`, its `history`, `GET
/v1/episodes/%20` and every other route with an id in its path still answered 404 for an id of whitespace or
invisible characters: facts (`fact_id`: the fact, its history, provenance and correction; a user's memory, its
confirmation and rejection), episodes and their jobs (`episode_id`), sessions (`session_id`: the session, its
episodes, summaries, compaction, pins, context and turns), pins (`key`), legal holds (`hold_id`) and API keys
(`key_id`). The tenant of an admin route was already a 422 ("Tenant required")."""
from __future__ import annotations

from urllib.parse import quote

from tests.test_api_blank_entity_id import BLANKS, _refused

CONTEXT = {"budget_tokens": 1000, "system_policy": "Be brief."}
TURN = {"idempotency_key": "blank-path-turn", "user_id": "u-blank",
        "episodes": [{"content": "hello", "occurred_at": "2024-09-02T10:00:00Z"}]}


def _calls(tenant: str, b: str, session: str) -> list[tuple[str, str, str, dict | None]]:
    """(method, path, the field at fault, JSON body) of every route with an id in its path, `b` as that id."""
    return [("GET", f"/v1/facts/{b}", "fact_id", None), ("GET", f"/v1/facts/{b}/history", "fact_id", None),
            ("GET", f"/v1/facts/{b}/provenance", "fact_id", None),
            ("POST", f"/v1/facts/{b}/correct", "fact_id", {"value": "x"}),
            ("POST", f"/v1/memories/candidates/{b}/confirm", "fact_id", {"user_id": "u"}),
            ("POST", f"/v1/memories/candidates/{b}/reject", "fact_id", {"user_id": "u"}),
            ("PATCH", f"/v1/memories/{b}", "fact_id", {"user_id": "u", "value": "x"}),
            ("DELETE", f"/v1/memories/{b}?user_id=u", "fact_id", None),
            ("GET", f"/v1/episodes/{b}", "episode_id", None),
            ("GET", f"/v1/jobs/{b}", "episode_id", None), ("POST", f"/v1/jobs/{b}/retry", "episode_id", None),
            ("GET", f"/v1/sessions/{b}", "session_id", None),
            ("GET", f"/v1/sessions/{b}/episodes", "session_id", None),
            ("GET", f"/v1/sessions/{b}/summaries", "session_id", None),
            ("POST", f"/v1/sessions/{b}/summaries/rollback", "session_id", None),
            ("POST", f"/v1/sessions/{b}/compact", "session_id", None),
            ("GET", f"/v1/sessions/{b}/pins", "session_id", None),
            ("POST", f"/v1/sessions/{b}/context", "session_id", CONTEXT),
            ("POST", f"/v1/sessions/{b}/turns", "session_id", TURN),
            ("GET", f"/v1/sessions/{b}/pins/goal", "session_id", None),
            ("GET", f"/v1/sessions/{session}/pins/{b}", "key", None),
            ("PUT", f"/v1/sessions/{session}/pins/{b}", "key", {"value": {"type": "goal", "value": "x"}}),
            ("DELETE", f"/v1/sessions/{session}/pins/{b}?version=1", "key", None),
            ("PUT", f"/v1/pin-keys/{b}", "key", {"type": "custom"}),
            ("DELETE", f"/v1/admin/tenants/{tenant}/holds/{b}", "hold_id", None),
            ("POST", f"/v1/admin/tenants/{tenant}/keys/{b}/revoke", "key_id", None),
            ("POST", f"/v1/admin/tenants/{tenant}/keys/{b}/rotate", "key_id", None)]


def test_a_blank_id_in_any_path_is_a_422_naming_it(client_for, tenant):
    c, admin = client_for(tenant), client_for(tenant, "admin")
    session = "blank-path-session"
    r = c.post(f"/v1/sessions/{session}/turns", json=TURN)
    assert r.status_code == 201, r.text
    for blank in BLANKS:
        for method, path, field, body in _calls(tenant, quote(blank), session):
            r = (admin if "/admin/" in path else c).request(method, path, json=body)
            _refused(r, field, (method, path))
    r = c.get("/v1/facts/no-such-fact/history")
    assert r.status_code == 404 and r.json()["field"] == "fact_id", r.text                    # unknown stays a 404
    r = c.get("/v1/episodes/no-such-episode")
    assert r.status_code == 404 and r.json()["field"] == "episode_id", r.text
    assert c.get(f"/v1/sessions/{session}").status_code == 200
