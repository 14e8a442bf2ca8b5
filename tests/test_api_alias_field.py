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
