"""An alias that cannot be a name (no letter or digit, or too long) is a 422 naming that alias, not the reference's
name. Helper-found: `{"name": "Dana Reyes", "aliases": ["DR", "..."]}` answered "facts[0].subject: name '...' has
no letters or digits", pointing at the reference (whose name is fine) and calling the alias its name."""
from __future__ import annotations


def test_a_bad_alias_is_named_as_the_alias(client_for, tenant):
    c = client_for(tenant)
    cases = ((["DR", "..."], "facts[0].subject.aliases[1]", "alias '...' has no letters or digits"),
             (["x" * 301], "facts[0].subject.aliases[0]", "aliases are limited to 300 characters"))
    for aliases, field, says in cases:
        subject = {"kind": "Person", "name": "Dana Reyes", "aliases": aliases}
        r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "HAS_TITLE", "value": "CTO"}]})
        assert r.status_code == 422 and r.json()["field"] == field, (aliases, r.text)
        assert r.json()["detail"] == f"{field}: {says}", r.text
    assert c.get("/v1/entities", params={"name": "Dana Reyes"}).json()["items"] == []
    # the name keeps its own rule: the reference is named (docs/http.md)
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Person", "name": "..."}, "predicate": "HAS_TITLE",
                                             "value": "CTO"}]})
    assert r.status_code == 422 and r.json()["field"] == "facts[0].subject", r.text


BIDI = ["\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069", "\u200e", "\u200f",
        "\u061c"]


def test_a_bidi_control_in_a_name_or_alias_is_refused_naming_it(client_for, tenant):
    """A bidirectional control (embedding, override, isolate, or a direction mark) in a name or an alias would
    show it reordered ("Alice\\u202eecilA" displays as "AliceAlice"): a 422 naming the name or the alias, nothing
    stored."""
    c = client_for(tenant)
    for ch in BIDI:
        for subject, field in (({"kind": "Person", "name": f"Alice{ch}ecilA"}, "facts[0].subject.name"),
                               ({"kind": "Person", "name": "Alice Hart", "aliases": ["AH", f"Al{ch}ice"]},
                                "facts[0].subject.aliases[1]")):
            r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "HAS_TITLE", "value": "CTO"}]})
            assert r.status_code == 422, (repr(ch), r.text)
            assert r.headers["content-type"].startswith("application/problem+json"), r.headers
            assert r.json()["field"] == field and "bidirectional" in r.json()["detail"], (repr(ch), r.text)
    assert c.get("/v1/entities", params={"name": "Alice Hart"}).json()["items"] == []
    assert c.get("/v1/entities", params={"name": "Alice"}).json()["items"] == []


def test_a_letterless_alias_is_refused_when_the_reference_has_no_name(client_for, tenant):
    """An alias with no letter or digit is a 422 naming it whether or not its reference has a name: a reference by
    id or by email alone with aliases ["DR", "..."] had the "..." dropped silently (and the write succeed)."""
    c = client_for(tenant)
    dana = {"kind": "Person", "name": "Dana Reyes", "email": "dana@reyes.io"}
    r = c.post("/v1/facts", json={"facts": [{"subject": dana, "predicate": "HAS_TITLE", "value": "CTO"}]})
    assert r.status_code == 200, r.text
    dana_id = c.get("/v1/entities", params={"name": "Dana Reyes"}).json()["items"][0]["id"]
    for subject in ({"email": "dana@reyes.io", "aliases": ["DR", "..."]},
                    {"id": dana_id, "aliases": ["DR", "..."]},
                    {"kind": "Person", "email": "dana@reyes.io", "name": "...", "aliases": ["DR", "❤️"]}):
        r = c.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": "HAS_TITLE", "value": "CFO"}]})
        assert r.status_code == 422, (subject, r.text)
        assert r.headers["content-type"].startswith("application/problem+json"), r.headers
        assert r.json()["field"] == "facts[0].subject.aliases[1]", (subject, r.text)
        assert "has no letters or digits" in r.json()["detail"], r.text
    facts = c.get("/v1/facts", params={"entity_id": dana_id}).json()
    assert [f["value"] for f in facts["items"]] == ["CTO"], facts
    assert c.get("/v1/entities", params={"name": "DR"}).json()["items"] == []
