"""Blank text is refused in one wording, the `VISIBLE` pattern's ("must not be blank: ...", graphmem.models.BLANK_WORDS
through `error_message`): helper-found, an entity reference's `name` and a fact's `value` of "\\u200b" said "name must
not be empty" / "value must not be empty" over HTTP where every other field said "must not be blank", and so did the
services' own checks (find_entities' name, forget's and a legal hold's target id, who_at's value). Real HTTP server
on loopback for the bodies; the services called directly for the checks no route reaches first. Nothing written."""
from __future__ import annotations

import pytest

from graphmem.errors import InvalidInput
from graphmem.models import BLANK_WORDS
from tests.test_api_blank_entity_id import BLANKS, _refused


def test_a_blank_name_or_value_is_a_422_in_the_words_of_every_other_field(client_for, tenant):
    c = client_for(tenant)
    search = c.post("/v1/search", json={"query": "\u200b"})    # a field of the VISIBLE pattern
    words = search.json()["errors"][0]["message"]
    assert words == BLANK_WORDS, search.text
    for b in BLANKS:
        for field, fact in (("facts[0].subject.name", {"subject": {"kind": "Person", "name": b},
                                                       "predicate": "HAS_TITLE", "value": "CTO"}),
                            ("facts[0].value", {"subject": {"kind": "Person", "name": "Ann"},
                                                "predicate": "HAS_TITLE", "value": b})):
            r = c.post("/v1/facts", json={"facts": [fact]})
            _refused(r, field, (field, b))
            assert [e["message"] for e in r.json()["errors"]] == [words], r.text     # one message source
    assert c.get("/v1/entities", params={"name": "Ann"}).json()["items"] == []      # nothing written


def test_the_services_own_blank_checks_say_must_not_be_blank(services, tenant):
    checks = {"name": lambda: services.graph.find_entities(tenant, "\u200b"),
              "user_id": lambda: services.governance.eraser.forget(tenant, user_id="\u200b"),
              "session_id": lambda: services.governance.holds.place(tenant, "session", "\u200b", "case 1"),
              "value": lambda: services.recall.who_at(tenant, "org-1", predicate="HAS_TITLE", value="\u200b")}
    for field, call in checks.items():
        with pytest.raises(InvalidInput) as err:
            call()
        assert err.value.field == field and BLANK_WORDS in str(err.value), (field, str(err.value))
    with pytest.raises(InvalidInput) as err:
        services.recall.find_entities(tenant, "\u200b")
    assert err.value.field == "name" and BLANK_WORDS in str(err.value), str(err.value)
