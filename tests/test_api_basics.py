"""The HTTP service's operations routes and API-key handling, through a real server on loopback."""
from __future__ import annotations

import importlib
import re

import httpx
from fastapi.routing import APIRoute

from api.routes import ROUTERS


def test_health_and_readiness(api_url):
    assert httpx.get(f"{api_url}/healthz").json() == {"status": "ok"}
    assert httpx.get(f"{api_url}/").json()["docs"] == "/v1/docs"   # no key needed; it was a 404
    r = httpx.get(f"{api_url}/readyz")
    assert r.status_code == 200 and r.json()["neo4j"] == "ok"
    # the session's server runs without an embedder: ready, and it says why search uses no vectors
    assert r.json()["vector_search"] == "off: no embedder configured (GRAPHMEM_EMBEDDER=none)"
    m = httpx.get(f"{api_url}/metrics")
    assert m.status_code == 200 and "graphmem_http_request_duration_seconds" in m.text
    assert "graphmem_embedding_model_mismatch 0.0" in m.text  # no embedder is not a mismatch


def test_metrics_name_the_openapi_and_docs_routes(api_url):
    """`/v1/openapi.json` and `/v1/docs` are Starlette routes FastAPI adds itself: their requests are counted under
    their own path (helper-found: they were "unmatched", like a 404 on an unknown path), and a 404 still is."""
    assert httpx.get(f"{api_url}/v1/openapi.json").status_code == 200
    assert httpx.get(f"{api_url}/v1/docs").status_code == 200
    assert httpx.get(f"{api_url}/v1/no-such-route").status_code == 404
    text = httpx.get(f"{api_url}/metrics").text
    for route, status in (("/v1/openapi.json", "200"), ("/v1/docs", "200"), ("unmatched", "404")):
        assert f'graphmem_http_request_duration_seconds_count{{method="GET",route="{route}",status="{status}"}}' in text


def test_admin_keys_lifecycle(api_url, client_for, tenant):
    admin = client_for("admin", "admin")
    created = admin.post(f"/v1/admin/tenants/{tenant}/keys", json={"role": "analyst", "name": "bi"})
    assert created.status_code == 201
    key, secret = created.json()["key"], created.json()["secret"]
    assert key["tenant_id"] == tenant and key["prefix"] == secret[:8]
    listed = admin.get(f"/v1/admin/tenants/{tenant}/keys").json()["items"]
    assert [k["id"] for k in listed] == [key["id"]] and "secret" not in listed[0] and listed[0].get("hash") is None
    rotated = admin.post(f"/v1/admin/tenants/{tenant}/keys/{key['id']}/rotate").json()
    assert rotated["secret"] != secret and rotated["key"]["role"] == "analyst"
    revoked = [k for k in admin.get(f"/v1/admin/tenants/{tenant}/keys").json()["items"] if k["revoked_at"]]
    assert [k["id"] for k in revoked] == [key["id"]]
    # the revoked key no longer authenticates
    r = httpx.get(f"{api_url}/v1/admin/tenants", headers={"Authorization": f"Bearer {secret}"})
    assert r.status_code == 401 and r.headers["content-type"] == "application/problem+json"
    # who may act is audited: created, rotated (target the old key), revoked, each by the admin key
    fresh = rotated["key"]["id"]
    assert admin.post(f"/v1/admin/tenants/{tenant}/keys/{fresh}/revoke").status_code == 200
    assert admin.post(f"/v1/admin/tenants/{tenant}/keys/{fresh}/revoke").status_code == 200   # idempotent
    records = admin.get(f"/v1/admin/tenants/{tenant}/audit").json()["items"]
    mine = [r for r in records if r["target_hash"] in {_key_hash(tenant, key["id"]), _key_hash(tenant, fresh)}]
    assert [(r["action"], r["target_kind"]) for r in mine] == [
        ("key_revoke", "key"), ("key_rotate", "key"), ("key_create", "key")]
    assert len({r["actor"] for r in mine}) == 1 and None not in {r["actor"] for r in mine}
    assert "bi" not in str(mine) and secret not in str(mine)


def _key_hash(tenant, key_id):
    from graphmem.governance.audit import target_hash
    return target_hash(tenant, "key", key_id)


def test_an_admin_key_of_a_tenant_manages_that_tenant_only(api_url, client_for, tenant):
    """Found by a helper: an admin key made with `keys create --tenant t3 --role admin` managed every tenant (made
    itself an admin key of t1, set t1's retention to a day, read t1's audit). It manages its own tenant now; for
    another tenant it answers 404 naming tenant_id, as another tenant's ids answer everywhere. The operator's
    admin keys (tenant `admin`) still manage every tenant."""
    own, other = tenant, tenant + "-other"
    operator, mine = client_for("admin", "admin"), client_for(own, "admin")
    assert operator.post(f"/v1/admin/tenants/{other}/keys", json={"role": "agent"}).status_code == 201
    before = operator.get(f"/v1/admin/tenants/{other}/retention").json()
    for method, path, body in [
            ("post", f"/v1/admin/tenants/{other}/keys", {"role": "admin"}),
            ("get", f"/v1/admin/tenants/{other}/keys", None),
            ("put", f"/v1/admin/tenants/{other}/retention", {"episode_retention_days": 1}),
            ("get", f"/v1/admin/tenants/{other}/retention", None),
            ("post", f"/v1/admin/tenants/{other}/holds", {"user_id": "u1", "reason": "case 7"}),
            ("get", f"/v1/admin/tenants/{other}/holds", None),
            ("get", f"/v1/admin/tenants/{other}/audit", None),
            ("post", "/v1/admin/sweep", {"tenant_id": other})]:
        r = mine.request(method, path, json=body)
        assert r.status_code == 404 and r.json()["field"] == "tenant_id", (path, r.text)
    assert mine.post("/v1/admin/sweep", json={"all_tenants": True}).status_code == 403
    assert operator.get(f"/v1/admin/tenants/{other}/retention").json() == before
    assert [k["role"] for k in operator.get(f"/v1/admin/tenants/{other}/keys").json()["items"]] == ["agent"]
    # its own tenant, as before
    assert mine.post(f"/v1/admin/tenants/{own}/keys", json={"role": "analyst"}).status_code == 201
    assert mine.put(f"/v1/admin/tenants/{own}/retention", json={"episode_retention_days": 30}).status_code == 200
    assert mine.post("/v1/admin/sweep", json={"tenant_id": own}).status_code == 200
    assert [t["tenant_id"] for t in mine.get("/v1/admin/tenants").json()["items"]] == [own]
    assert len(operator.get("/v1/admin/tenants").json()["items"]) >= 2     # admin, own, other, ...


def test_auth_failures_are_problems(api_url, client_for, tenant):
    r = httpx.get(f"{api_url}/v1/admin/tenants")
    assert r.status_code == 401 and r.json()["title"] == "Unauthorized"
    r = httpx.get(f"{api_url}/v1/admin/tenants", headers={"X-API-Key": "gm_not-a-key"})
    assert r.status_code == 401
    assert r.json()["field"] == "X-API-Key", r.text
    agent = client_for(tenant, "agent")
    r = agent.get("/v1/admin/tenants")
    assert r.status_code == 403 and r.headers["content-type"] == "application/problem+json"
    # routing's refusals name what is at fault too (helper-found: they named nothing)
    r = agent.get("/v1/no-such-route")
    assert r.status_code == 404 and r.json()["field"] == "path", r.text
    r = agent.delete("/v1/search")
    assert r.status_code == 405 and r.json()["field"] == "method", r.text
    # a trailing slash is an unknown route too, with or without a key (helper-found: a 307 to the same path
    # without it, at the host the request's Host header named, before any key was checked)
    for client in (agent, httpx.Client(base_url=api_url)):
        r = client.post("/v1/search/", json={"query": "x"}, headers={"Host": "evil.example"})
        assert r.status_code == 404 and r.json()["field"] == "path" and "location" not in r.headers, r.text
        assert r.headers["content-type"] == "application/problem+json"


def test_validation_problem_names_the_field(client_for, tenant):
    admin = client_for("admin", "admin")
    r = admin.post(f"/v1/admin/tenants/{tenant}/keys", json={"role": "root"})
    assert r.status_code == 422
    body = r.json()
    assert body["field"] == "role" and body["status"] == 422 and "traceback" not in r.text.lower()


def test_problem_field_is_the_path_in_the_request(client_for, tenant):
    """The field is named as the caller wrote it: the request part (body, query) is dropped only in front, so a
    field that is itself called "query" keeps its name, nested fields keep their parents, and a body that is not
    JSON is "body"."""
    c = client_for(tenant)
    cases = [({"query": ""}, "/v1/search", "query"),
             ({"entity": {"query": 5}}, "/v1/recall", "entity.query"),
             ({"entity": {"id": "x"}, "other": {"query": "x" * 2001}}, "/v1/recall", "other.query")]
    for body, route, field in cases:
        r = c.post(route, json=body)
        assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)
    for content in (b'{"query": "dana", ', b'\xff\xfe{', '{"query": "Jos\u00e9"}'.encode("latin-1")):  # not UTF-8
        r = c.post("/v1/search", content=content, headers={"content-type": "application/json"})
        assert r.status_code == 422 and r.json()["field"] == "body", r.text
        assert r.headers["content-type"] == "application/problem+json"
    # JSON in UTF-16 or UTF-32 is not UTF-8 either (helper-found: Python's json.loads guesses those encodings
    # from the bytes, so such a body was searched as if it were UTF-8); a UTF-8 byte order mark is ignored
    for encoding in ("utf-16", "utf-16-le", "utf-16-be", "utf-32"):
        r = c.post("/v1/search", content='{"query": "Jos\u00e9"}'.encode(encoding),
                   headers={"content-type": "application/json"})
        assert r.status_code == 422 and r.json()["field"] == "body", (encoding, r.text)
    r = c.post("/v1/search", content='{"query": "Jos\u00e9"}'.encode("utf-8-sig"),
               headers={"content-type": "application/json"})
    assert r.status_code == 200, r.text


def test_openapi_documents_errors_as_problem_json(client_for, tenant):
    """The published schema says what an error looks like: every operation's 4XX, 5XX and 422 answers are
    application/problem+json `Problem` bodies (FastAPI's own HTTPValidationError shape is never sent), and a real
    422 and 404 carry the fields the schema marks required."""
    c = client_for(tenant)
    schema = c.get("/v1/openapi.json").json()
    problem = schema["components"]["schemas"]["Problem"]
    assert set(problem["required"]) == {"title", "status", "detail"} and "HTTPValidationError" not in str(schema)
    ref = {"application/problem+json": {"schema": {"$ref": "#/components/schemas/Problem"}}}
    for path, ops in schema["paths"].items():
        for method, op in ops.items():
            for status in ("4XX", "5XX", *[s for s in op["responses"] if s.startswith("4")]):
                assert op["responses"][status]["content"] == ref, (method, path, status)
    for r in (c.post("/v1/search", json={"query": ""}), c.get("/v1/entities/nope")):
        assert r.headers["content-type"].startswith("application/problem+json")
        assert set(problem["required"]) <= set(r.json()) and r.json()["field"], r.text


def test_times_beyond_year_9999_in_utc_are_bad_input(client_for, tenant):
    """An offset can carry a valid date past year 9999 (or before year 1) once converted to UTC: a 422 naming the
    field, not a server error, on reads and writes alike."""
    c = client_for(tenant)
    r = c.post("/v1/search", json={"query": "dana", "as_of": "9999-12-31T23:59:59-05:00"})
    assert r.status_code == 422 and r.json()["field"] == "as_of", r.text
    r = c.post("/v1/search", json={"query": "dana", "known_at": "0001-01-01T00:00:00+05:00"})
    assert r.status_code == 422 and r.json()["field"] == "known_at", r.text
    r = c.get("/v1/facts", params={"entity_id": "x", "as_of": "9999-12-31T23:59:59-05:00"})
    assert r.status_code == 422 and r.json()["field"] == "as_of", r.text
    r = c.post("/v1/search", json={"query": "dana", "as_of": "9999-12-31T23:59:59Z"})
    assert r.status_code == 200, r.text


def test_body_limit(client_for, tenant, settings):
    admin = client_for("admin", "admin")
    r = admin.post(f"/v1/admin/tenants/{tenant}/keys", content=b"x" * (settings.max_body_bytes + 10),
                   headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["title"] == "Request body too large" and r.json()["field"] == "body"
    assert r.json()["instance"] == f"/v1/admin/tenants/{tenant}/keys"
    # a streamed body (no Content-Length) that grows past the limit is a 413 too
    chunks = (b"x" * 65536 for _ in range(settings.max_body_bytes // 65536 + 2))
    r = client_for(tenant).post("/v1/episodes", content=chunks, headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["instance"] == "/v1/episodes", r.text


def test_a_request_is_refused_for_what_the_route_does_not_take(api_url, client_for, tenant):
    """Unknown query parameters (all of them listed), a single-valued parameter given twice, and a body sent to a
    route that takes none are 422s naming them; only after the key (401) and the role (403) are checked, and
    never on the operations routes, which monitors call with cache-busters."""
    c = client_for(tenant)
    r = c.get("/v1/entities", params=[("nmae", "x"), ("knd", "Person"), ("limit", "1"), ("limit", "3")])
    assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json", r.text
    assert [(e["field"], "not a query parameter" in e["message"]) for e in r.json()["errors"]] == \
        [("nmae", True), ("knd", True), ("limit", False)], r.text
    assert "kind" in r.json()["detail"] and "more than once" in r.json()["errors"][2]["message"]
    r = c.post("/v1/jobs/0123/retry", json={"force": True})
    assert r.status_code == 422 and r.json()["field"] == "body", r.text
    r = c.post("/v1/jobs/0123/retry", content=iter([b'{"force": true}']))   # chunked
    assert r.status_code == 422 and r.json()["field"] == "body", r.text
    for empty in (b"", iter([])):   # Content-Length: 0, and an empty chunked stream, are no body
        assert c.post("/v1/jobs/0123/retry", content=empty).status_code == 404
    assert httpx.get(f"{api_url}/v1/entities", params={"nmae": "x"}).status_code == 401
    json_type = {"content-type": "application/json"}
    for headers in (json_type, {**json_type, "X-API-Key": "gm_nope"}):   # the key first, then the body
        assert httpx.post(f"{api_url}/v1/episodes", content=b"{bad", headers=headers).status_code == 401
    r = c.post("/v1/episodes", content=b"{bad", headers=json_type)
    assert r.status_code == 422 and r.json()["field"] == "body", r.text
    assert r.json()["detail"] == "body: not valid JSON: Expecting property name enclosed in double quotes " \
        "(at character 1)", r.text
    # a name said twice in one object: which value counts would be a guess, so nothing is stored (Python's decoder
    # kept the last one silently)
    for body in (b'{"content": "a", "content": "b", "session_id": "dup", "occurred_at": "2024-01-01T00:00:00Z"}',
                 b'{"episodes": [{"content": "a", "session_id": "dup", "occurred_at": "2024-01-01T00:00:00Z",'
                 b' "occurred_at": "2025-01-01T00:00:00Z"}]}'):
        r = c.post("/v1/episodes" + ("/batch" if b"episodes" in body else ""), content=body, headers=json_type)
        assert r.status_code == 422 and r.json()["field"] == "body", r.text
        assert "appears twice in one object" in r.json()["detail"], r.text
    assert c.get("/v1/sessions/dup/episodes").json().get("items", []) == []
    analyst = client_for(tenant, "analyst")
    assert analyst.post("/v1/facts", params={"dry_run": "1"}, json={"facts": []}).status_code == 403
    assert analyst.post("/v1/episodes", content=b"{bad", headers=json_type).status_code == 403   # the role, too
    assert c.put("/v1/admin/tenants/x/retention", content=b"{bad", headers=json_type).status_code == 403
    assert analyst.post("/v1/search", content=b"{bad", headers=json_type).status_code == 422      # a read route
    for path in ("/healthz", "/readyz", "/metrics"):
        assert httpx.get(f"{api_url}{path}", params={"_": "1712"}).status_code == 200, path


def test_a_misspelt_body_field_names_the_closest_one(client_for, tenant):
    """helper-found (a new user): `{"target": ...}` for `targets` was a bare "not a field of this request"."""
    c = client_for(tenant)
    r = c.post("/v1/search", json={"query": "Dana", "target": ["fact"]})
    assert r.status_code == 422 and r.json()["field"] == "target", r.text
    assert r.json()["detail"].endswith("did you mean 'targets'?"), r.text
    r = c.post("/v1/search", json={"query": "Dana", "zzz": 1})
    assert r.status_code == 422 and "did you mean" not in r.json()["detail"], r.text   # nothing close: no guess


def test_a_field_inside_a_typed_pin_value_is_named_as_sent(client_for, tenant):
    """Pin values are a union tagged by `type`; the error names `value.curency`, not pydantic's
    `value.amount.curency`."""
    c = client_for(tenant)
    r = c.put("/v1/sessions/s-1/pins/amount", json={"value": {"type": "amount", "value": "1.00", "curency": "EUR"}})
    assert r.status_code == 422 and r.json()["field"] == "value.curency", r.text
    assert "not a field of this request" in r.json()["detail"], r.text
    r = c.put("/v1/sessions/s-1/pins/amount", json={"value": {"type": "amuont", "value": "1.00"}})
    assert r.status_code == 422 and r.json()["field"] == "value.type", r.text
    assert "must be one of 'order_id', 'amount'" in r.json()["detail"], r.text
    # a field the server sets is not taken from the request either
    r = c.put("/v1/consent", json={"scope": "user", "user_id": "u-1", "share_preferences": True,
                                   "updated_at": "2024-01-01T00:00:00Z"})
    assert r.status_code == 422 and r.json()["field"] == "updated_at", r.text


def test_reading_a_pin_of_a_session_that_does_not_exist_names_the_session(client_for, tenant):
    """helper-found (a new user): GET .../pins/{key} of a mistyped session id said "session 'x' has no pin 'k'",
    field `key`, as if the session existed; listing its pins, or writing or deleting one, names `session_id`."""
    c = client_for(tenant)
    for r in (c.get("/v1/sessions/no-such-session/pins/order_id"), c.get("/v1/sessions/no-such-session/pins"),
              c.delete("/v1/sessions/no-such-session/pins/order_id", headers={"If-Match": "1"})):
        assert r.status_code == 404 and r.json()["field"] == "session_id", r.text
        assert r.json()["detail"] == "session_id: no session 'no-such-session'", r.text
    assert c.put("/v1/sessions/s-pin/pins/order_id", json={"value": {"type": "order_id", "value": "A-1"}}).status_code \
        == 404   # a pin write on its own creates no session
    assert c.post("/v1/sessions", json={"id": "s-pin", "user_id": "u-pin"}).status_code == 201
    r = c.get("/v1/sessions/s-pin/pins/order_id")          # the session exists: the key is what is missing
    assert r.status_code == 404 and r.json()["field"] == "key", r.text


def test_a_key_rotated_from_many_clients_at_once_is_rotated_once(client_for, tenant):
    """Found by a helper: 8 rotations of one key sent at once all answered 201 and left 8 live keys (and 8 audit
    records). One rotation wins; the others are 409 naming key_id, as for a key already revoked."""
    import threading
    admin = client_for("admin", "admin")
    key = admin.post(f"/v1/admin/tenants/{tenant}/keys", json={"role": "agent", "name": "racer"}).json()["key"]
    gate, answers = threading.Barrier(8), []

    def rotate():
        gate.wait()
        r = admin.post(f"/v1/admin/tenants/{tenant}/keys/{key['id']}/rotate")
        answers.append((r.status_code, r.json().get("field")))
    threads = [threading.Thread(target=rotate) for _ in range(8)]
    [t.start() for t in threads]
    [t.join() for t in threads]
    assert sorted(answers, key=str) == [(201, None)] + [(409, "key_id")] * 7, answers
    live = [k for k in admin.get(f"/v1/admin/tenants/{tenant}/keys", params={"limit": 500}).json()["items"]
            if k["name"] == "racer" and not k["revoked_at"]]
    assert len(live) == 1
    rotations = [r for r in admin.get(f"/v1/admin/tenants/{tenant}/audit").json()["items"] if r["action"] == "key_rotate"]
    assert len(rotations) == 1


def test_a_body_not_sent_as_json_names_its_content_type(api_url, client_for, tenant):
    """Found by a helper: `curl -d '{"query": "Dana"}'` without `-H "Content-Type: application/json"` sends a form,
    and every JSON route answered "body: must be a JSON object" about a JSON object. A body whose Content-Type is
    not JSON (a form, text/plain, none) is a 415 naming `Content-Type` on every route that takes a body (read from
    the routers), after the key and the role; application/json with a charset, or a +json type, is read."""
    admin = client_for(tenant, "admin")   # the tenant's admin key reaches every route's own checks
    body_routes = [(m, re.sub(r"\{tenant_id\}", tenant, re.sub(r"\{(?!tenant_id)[^}]+\}", "x-1", r.path)))
                   for name in ROUTERS for r in importlib.import_module(f"api.routes.{name}").router.routes
                   if isinstance(r, APIRoute) and r.body_field is not None for m in r.methods]
    assert ("POST", "/v1/search") in body_routes and len(body_routes) > 15, body_routes
    form, plain = {"content-type": "application/x-www-form-urlencoded"}, {"content-type": "text/plain"}
    for method, path in body_routes:
        for headers in (form, plain, {}):
            r = admin.request(method, path, content=b'{"query": "Dana"}', headers=headers)
            assert r.status_code == 415 and r.json()["field"] == "Content-Type", (method, path, headers, r.text)
            assert r.headers["content-type"] == "application/problem+json"
            assert "application/json" in r.json()["detail"], r.text
    detail = admin.post("/v1/search", content=b'{"query": "Dana"}', headers=form).json()["detail"]
    assert "'application/x-www-form-urlencoded'" in detail, detail
    c = client_for(tenant)
    for ctype in ("application/json; charset=utf-8", "application/merge-patch+json"):
        r = c.post("/v1/search", content=b'{"query": "Dana"}', headers={"content-type": ctype})
        assert r.status_code == 200, (ctype, r.text)
    # the key (401) and the role (403) come first, as for a body that is not JSON
    assert httpx.post(f"{api_url}/v1/search", content=b'{"query": "Dana"}', headers=form).status_code == 401
    r = client_for(tenant, "analyst").post("/v1/episodes", content=b'{"content": "hi"}', headers=form)
    assert r.status_code == 403, r.text


def test_every_error_that_names_a_field_starts_with_it(client_for, tenant):
    """docs/http.md, "Errors": a problem's `detail` starts with the `field` it names (helper-found: "no fact 'x'",
    "no episode ...", "no extraction job ...", "name has no letters or digits" did not)."""
    c = client_for(tenant)
    calls = [("fact_id", c.get("/v1/facts/nope")), ("fact_id", c.get("/v1/facts/nope/history")),
             ("fact_id", c.get("/v1/facts/nope/provenance")), ("episode_id", c.get("/v1/episodes/nope")),
             ("session_id", c.get("/v1/sessions/nope/episodes")), ("episode_id", c.get("/v1/jobs/nope")),
             ("name", c.get("/v1/entities", params={"name": "*"})),
             ("occurred_after", c.post("/v1/search", json={"query": "x", "occurred_after": "2024-02-01T00:00:00Z",
                                                             "occurred_before": "2024-01-01T00:00:00Z"}))]
    for field, r in calls:
        assert r.status_code in (404, 422) and r.json()["field"] == field, (field, r.text)
        assert r.json()["detail"].startswith(field), (field, r.text)
    assert c.get("/v1/facts/nope").json()["detail"] == "fact_id: no fact 'nope'"
