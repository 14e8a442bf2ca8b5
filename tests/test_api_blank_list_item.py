"""An item of a list of text that must not be blank is refused when it is blank, also of invisible characters
outside the Basic Multilingual Plane alone: a 422 naming the item (`constraints[0]`) with the `VISIBLE` pattern's
error ("must not be blank"), the same error a space gives, nothing written. Helper-found: a context request's
`constraints` of ["\\U000e0020"] (a tag space) answered 200 and put an empty "- Constraint:" line in the window
(" " was a 422); an entity reference's `external_ids` took "\\u200b" or "\\U000e0020" as an external id (only "" or
whitespace was refused, naming the list), and an alias " " was refused by the service in other words ("has no
letters or digits"). Predicates, entity kinds and targets have their own patterns, which refuse such an item
already; they are checked here too."""
from __future__ import annotations

from tests.test_api_astral_blank_id import ASTRAL_BLANKS
from tests.test_api_blank_entity_id import BLANKS, _refused

CONTEXT = {"budget_tokens": 1000, "system_policy": "Be brief."}


def _fact(**subject) -> dict:
    return {"facts": [{"subject": {"kind": "Person", "name": "Lena Voss", **subject}, "predicate": "HAS_TITLE",
                       "value": "CTO"}]}


def _calls(b: str) -> list[tuple[str, str, dict]]:
    """(path, the item at fault, body) of every POST whose body has a list of text that must not be blank, with `b`
    as its second item."""
    return [("/v1/sessions/s1/context", "constraints[1]", {**CONTEXT, "constraints": ["Be kind.", b]}),
            ("/v1/facts", "facts[0].subject.aliases[1]", _fact(aliases=["LV", b])),
            ("/v1/facts", "facts[0].subject.external_ids[1]", _fact(external_ids=["crm:contact:lv", b]))]


def test_a_blank_item_of_a_list_is_a_422_naming_the_item(client_for, tenant):
    c = client_for(tenant)
    for blank in BLANKS + ASTRAL_BLANKS:
        for (path, field, body), (_, _, spaced) in zip(_calls(blank), _calls(" ")):
            r = c.post(path, json=body)
            _refused(r, field, (path, blank))
            same = c.post(path, json=spaced)
            assert r.json()["errors"] == same.json()["errors"], (r.text, same.text)    # the pattern's own error
        for body, field in (({"predicates": ["WORKS_AT", blank]}, "predicates[1]"),
                            ({"entity_kinds": ["Person", blank]}, "entity_kinds[1]"),
                            ({"targets": ["fact", blank]}, "targets[1]")):
            r = c.post("/v1/search", json={"query": "who", **body})
            assert r.status_code == 422 and r.json()["field"] == field, (body, r.text)
    assert c.get("/v1/entities", params={"name": "Lena Voss"}).json()["items"] == []       # nothing written
    r = c.post("/v1/sessions/s1/context", json={**CONTEXT, "constraints": ["Be kind.", "x\U000e0020"]})
    assert r.status_code == 200 and "- Constraint: x" in r.text, r.text                      # a visible one is kept
    r = c.post("/v1/facts", json=_fact(aliases=["LV"], external_ids=[" crm:contact:lv "]))
    assert r.status_code == 200, r.text
    lena = c.get("/v1/entities", params={"name": "Lena Voss"}).json()["items"]
    assert [(e["aliases"], e["external_ids"]) for e in lena] == [(["LV"], ["crm:contact:lv"])], lena
