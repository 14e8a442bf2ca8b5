"""Authentication, roles and tenancy across every /v1 route the app serves (read from the app itself, so routers
added later are covered without editing this file): no key, a bad key and a revoked key answer 401; an analyst
writing and an agent on admin routes answer 403; tenant A's ids asked for by tenant B answer 404 exactly like
unknown ids."""
from __future__ import annotations

import importlib
import re
import uuid
from datetime import datetime, timezone

import httpx
import pytest
from fastapi.routing import APIRoute

from api import deps
from api.routes import ROUTERS
from graphmem.models import EntityRef, EpisodeIn, FactIn

PROBLEM = "application/problem+json"


def _depends_on(route: APIRoute, fn) -> bool:
    stack = [route.dependant]
    while stack:
        d = stack.pop()
        if d.call is fn:
            return True
        stack.extend(d.dependencies)
    return False


@pytest.fixture(scope="module")
def routes() -> list[tuple[str, str, APIRoute]]:
    """(method, path template, route) for every /v1 route of every router the app includes."""
    out = []
    for name in ROUTERS:
        try:
            module = importlib.import_module(f"api.routes.{name}")
        except ModuleNotFoundError:
            continue
        for r in module.router.routes:
            if isinstance(r, APIRoute) and r.path.startswith("/v1/"):
                out += [(m, r.path, r) for m in sorted(r.methods)]
    assert out, "the app serves no /v1 routes"
    return out


def _fill(path: str, value: str = "0" * 32) -> str:
    return re.sub(r"\{[^}]+\}", value, path)


def _send(method: str, url: str, headers: dict | None = None) -> httpx.Response:
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return httpx.request(method, url, headers=headers or {}, json=body, timeout=30)


def test_every_v1_route_needs_a_key(routes):
    unauthenticated = [f"{m} {p}" for m, p, r in routes if not _depends_on(r, deps.principal)]
    assert unauthenticated == []


def test_no_bad_or_revoked_key_gets_in(api_url, routes, services, tenant):
    key, secret = services.keys.create(tenant, "admin", "to-revoke")
    services.keys.revoke(tenant, key.id)
    for method, path, _ in routes:
        url = api_url + _fill(path)
        for headers in ({}, {"Authorization": "Bearer gm_not-a-key"}, {"X-API-Key": "gm_not-a-key"},
                        {"Authorization": f"Bearer {secret}"}, {"Authorization": "Basic dXNlcjpwYXNz"}):
            r = _send(method, url, headers)
            assert r.status_code == 401, (method, path, headers, r.status_code, r.text)
            assert r.headers["content-type"] == PROBLEM and r.headers["www-authenticate"] == "Bearer"
            # the field at fault is the header the key came in (helper-found: 401 and 403 named none)
            assert r.json()["field"] == ("X-API-Key" if "X-API-Key" in headers else "Authorization"), r.text



def test_two_different_keys_are_refused_not_one_picked(api_url, make_key, tenant):
    """A key in each header that differ: 401, whichever is valid (helper-found: X-API-Key silently won, so a
    request meant for one tenant answered as another, and a bad bearer key beside a good one went unnoticed). The
    same key in both headers is fine."""
    a, b = make_key(tenant), make_key(f"{tenant}-b")
    url = api_url + "/v1/sessions"
    for headers in ({"Authorization": f"Bearer {a}", "X-API-Key": b},
                    {"Authorization": "Bearer gm_not-a-key", "X-API-Key": a}):
        r = httpx.get(url, headers=headers)
        assert r.status_code == 401 and r.headers["content-type"] == PROBLEM, r.text
        assert "two different API keys" in r.json()["detail"], r.text
    assert httpx.get(url, headers={"Authorization": f"Bearer {a}", "X-API-Key": a}).status_code == 200


def test_a_key_sent_without_the_bearer_scheme_is_told_so(api_url, make_key, tenant):
    """helper-found (a new user): `Authorization: gm_...` (no `Bearer `) answered "an API key is required", as if
    none had been sent. Still a 401 naming Authorization, now saying what the header takes."""
    a = make_key(tenant)
    url = api_url + "/v1/sessions"
    for value in (a, f"Token {a}", "Basic dXNlcjpwYXNz"):
        r = httpx.get(url, headers={"Authorization": value})
        assert r.status_code == 401 and r.json()["field"] == "Authorization", r.text
        assert "without the Bearer scheme" in r.json()["detail"] and a not in r.text, r.text
    assert httpx.get(url, headers={"Authorization": f"bearer {a}"}).status_code == 200
    for headers in ({}, {"Authorization": "Bearer"}):    # no key at all
        r = httpx.get(url, headers=headers)
        assert r.status_code == 401 and r.json()["detail"].startswith("an API key is required"), r.text


def test_one_header_sent_twice_with_two_keys_is_refused(api_url, make_key, tenant):
    """The same header twice with different keys: 401, not the first one (helper-found: `X-API-Key: <A>` then
    `X-API-Key: <B>` answered as tenant A, B's as B, and a good key before a bad or revoked one got in). The same
    key twice is fine."""
    a, b = make_key(tenant), make_key(f"{tenant}-b")
    url = api_url + "/v1/sessions"
    for name, value in (("X-API-Key", "{}"), ("Authorization", "Bearer {}")):
        for first, second in ((a, b), (b, a), (a, "gm_not-a-key")):
            r = httpx.get(url, headers=[(name, value.format(first)), (name, value.format(second))])
            assert r.status_code == 401 and r.headers["content-type"] == PROBLEM, (name, r.status_code, r.text)
            assert "two different API keys" in r.json()["detail"] and r.json()["field"] == name, r.text
        assert httpx.get(url, headers=[(name, value.format(a)), (name, value.format(a))]).status_code == 200


def test_a_tenant_id_that_cannot_be_a_path_segment_gets_no_key(services):
    """Admin routes name the tenant in the path (/v1/admin/tenants/{tenant}/keys): a tenant id with "/", a control
    character, or "." / ".." could be given keys and then never be addressed there."""
    from graphmem.errors import InvalidInput
    for odd in ("x/y", "..", ".", "t\n1"):
        with pytest.raises(InvalidInput) as err:
            services.keys.create(odd, "agent")
        assert err.value.field == "tenant_id"
    assert all(t.tenant_id not in ("x/y", "..") for t in services.keys.tenants(0, 500))

def test_roles(api_url, routes, make_key, tenant):
    analyst = {"Authorization": f"Bearer {make_key(tenant, 'analyst')}"}
    agent = {"Authorization": f"Bearer {make_key(tenant, 'agent')}"}
    writes = [(m, p) for m, p, r in routes if _depends_on(r, deps.writer)]
    admins = [(m, p) for m, p, r in routes if _depends_on(r, deps.admin)]
    assert ("POST", "/v1/facts") in writes and ("GET", "/v1/admin/tenants") in admins
    for method, path in writes:
        r = _send(method, api_url + _fill(path), analyst)
        assert r.status_code == 403 and r.headers["content-type"] == PROBLEM, (method, path, r.text)
        assert "read-only" in r.json()["detail"] and r.json()["field"] == "Authorization", r.text
        assert _send(method, api_url + _fill(path), agent).status_code != 403, (method, path)
    for method, path in admins:
        for who in (agent, analyst):
            r = _send(method, api_url + _fill(path), who)
            assert r.status_code == 403 and r.headers["content-type"] == PROBLEM, (method, path, r.text)
    # reads stay open to analysts
    reads = [(m, p) for m, p, r in routes if m == "GET" and not _depends_on(r, deps.admin)]
    for method, path in reads:
        assert _send(method, api_url + _fill(path), analyst).status_code not in (401, 403), (method, path)


def _tenant_a_ids(services, tenant_id: str) -> dict[str, str]:
    """Records of each kind in tenant A: {"facts": id, "entities": id, "episodes": id, ["sessions": id]}."""
    graph = services.graph
    ep, _ = graph.append_episode(tenant_id, EpisodeIn(content="Dana joined Globex", session_id=f"s-{tenant_id}",
                                                      occurred_at=datetime(2024, 1, 2, tzinfo=timezone.utc)))
    out = graph.assert_fact(tenant_id, FactIn(subject=EntityRef(kind="Person", name="Dana Reyes"),
                                              predicate="WORKS_AT", episode_id=ep.id,
                                              object=EntityRef(kind="Organization", name="Globex")))
    fact = graph.get_fact(tenant_id, out.fact_id)
    return {"facts": fact.id, "entities": fact.subject_id, "episodes": ep.id, "sessions": f"s-{tenant_id}",
            "jobs": ep.id}


def test_other_tenants_ids_answer_404_like_unknown_ids(api_url, routes, services, make_key, tenant):
    ids = _tenant_a_ids(services, tenant)
    a = {"Authorization": f"Bearer {make_key(tenant, 'agent')}"}
    b = {"Authorization": f"Bearer {make_key(tenant + '-b', 'agent')}"}
    checked = []
    for method, path, _ in routes:
        m = re.fullmatch(r"/v1/(\w+)/\{(\w+)\}(/[\w/]*)?", path)
        if method != "GET" or not m or m.group(1) not in ids:
            continue
        own = ids[m.group(1)]
        unknown = uuid.uuid4().hex
        ra = _send(method, api_url + _fill(path, own), a)
        rb = _send(method, api_url + _fill(path, own), b)
        ru = _send(method, api_url + _fill(path, unknown), b)
        if ru.status_code != 404:  # e.g. a route that lists nothing for an unknown session instead of 404
            assert rb.status_code == ru.status_code and rb.json() == ru.json(), (path, rb.text, ru.text)
            continue
        assert ra.status_code != 404, (path, ra.text)
        assert rb.status_code == 404 and rb.headers["content-type"] == PROBLEM, (path, rb.text)
        jb, ju = rb.json(), ru.json()
        assert (jb["title"], jb.get("field")) == (ju["title"], ju.get("field")), path
        assert jb["detail"].replace(own, "ID") == ju["detail"].replace(unknown, "ID"), path
        checked.append(path)
    assert "/v1/facts/{fact_id}" in checked
    for area in ("episodes", "entities"):
        if any(p.startswith(f"/v1/{area}/{{") for _, p, _ in routes):
            assert any(p.startswith(f"/v1/{area}/") for p in checked), f"no {area} route was checked"
