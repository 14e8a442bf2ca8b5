"""An id of invisible characters outside the Basic Multilingual Plane alone is blank too: a 422 naming it, with the
error a body field already gave ("must not be blank", pydantic's string_pattern_mismatch), not a 404 or a filter
that matches nothing. Helper-found: a tag space U+E0020 (or a variation selector 17, U+E0100, or the musical
symbol begin beam U+1D173, a format character) passes the `VISIBLE` pattern (which lists BMP characters only, so
that ECMA-262 clients read it as the server does) and was a 404 as an id in a path, as `GET /v1/facts?entity_id=`
and as an item of a search's `seed_entity_ids`; the body and query-string ids (and who-at's `value`, `object_id`
and `via_value`) of tests/test_api_blank_body_id.py
and tests/test_api_blank_query_id.py are checked the same way. The OpenAPI pattern stays as it is."""
from __future__ import annotations

from urllib.parse import quote

from tests import test_api_blank_body_id, test_api_blank_path_id, test_api_blank_query_id
from tests.test_api_blank_entity_id import _refused

ASTRAL_BLANKS = ("\U000e0020", "\U000e0100\U000e0020", " \U0001d173 ")


def test_an_id_of_invisible_characters_outside_the_bmp_is_a_422_naming_it(client_for, tenant):
    c, admin = client_for(tenant), client_for(tenant, "admin")
    session = "astral-path-session"
    assert c.post(f"/v1/sessions/{session}/turns", json=test_api_blank_path_id.TURN).status_code == 201
    for blank in ASTRAL_BLANKS:
        b = quote(blank)
        for method, path, field, body in test_api_blank_path_id._calls(tenant, b, session) + [
                ("GET", f"/v1/entities/{b}", "entity_id", None),
                ("GET", f"/v1/entities/{b}/neighbourhood", "entity_id", None),
                ("GET", f"/v1/entities/{b}/paths/x", "entity_id", None),
                ("GET", f"/v1/entities/x/paths/{b}", "other_id", None)]:
            _refused((admin if "/admin/" in path else c).request(method, path, json=body), field, (method, path, blank))
        for method, path, field, body in test_api_blank_body_id._calls(tenant, blank):
            _refused((admin if "/admin/" in path else c).request(method, path, json=body), field, (method, path, blank))
        for method, path, field, params in test_api_blank_query_id._calls(blank) + [
                ("GET", "/v1/recall/who-at", f, {"org": "x", f: blank}) for f in ("value", "object_id", "via_value")]:
            _refused(c.request(method, path, params=params), field, (method, path, blank))
        r = c.post("/v1/search", json={"query": "astral", "seed_entity_ids": ["x", blank]})
        _refused(r, "seed_entity_ids[1]", blank)
        same = c.post("/v1/search", json={"query": "astral", "seed_entity_ids": ["x", " "]})   # the pattern's error
        assert r.json()["errors"] == same.json()["errors"], (r.text, same.text)
    assert c.get(f"/v1/sessions/{session}").status_code == 200
    assert c.get("/v1/entities/no-such-entity").status_code == 404                       # unknown stays a 404
    assert c.post("/v1/search", json={"query": "astral", "seed_entity_ids": ["x\U000e0020"]}).status_code == 404
