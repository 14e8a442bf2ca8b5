"""An external id is trimmed of the characters `graphmem.identifiers.blank` finds blank at either end (`trim_blank`), not
only of whitespace: helper-found, "crm:1\\u200b" and "crm:1" keyed two entities, so a record sent again with an
invisible character at an end (a zero-width space or a byte-order mark copied from a web page or a CSV export, a tag
character, a Hangul filler) made a second person of the same name (another id of the `crm` system: somebody else).
An invisible character inside an id is kept (it is part of the id as sent)."""
from __future__ import annotations

ENDS = {"Ann Lee": "crm:1\u200b", "Bo Ray": "\ufeffcrm:2", "Cy Dunn": "crm:3\U000e0020",
        "Di Fox": "\u2060crm:4\u3164", "Ed Hale": " crm:5\u00ad\U000e0100 "}


def _title(c, name: str, external_id: str, title: str) -> None:
    fact = {"subject": {"kind": "Person", "name": name, "external_ids": [external_id]}, "predicate": "HAS_TITLE",
            "value": title}
    r = c.post("/v1/facts", json={"facts": [fact]})
    assert r.status_code == 200, (name, r.text)


def test_an_external_id_with_invisible_characters_at_its_ends_is_the_id_without_them(client_for, tenant):
    c = client_for(tenant)
    for name, sent in ENDS.items():
        _title(c, name, sent, "CTO")
        trimmed = sent.strip(" \u200b\ufeff\U000e0020\u2060\u3164\u00ad\U000e0100")
        _title(c, name, trimmed, "CEO")                   # the same person, by the id without them
        people = c.get("/v1/entities", params={"name": name}).json()["items"]
        assert [e["external_ids"] for e in people] == [[trimmed]], (name, people)
    _title(c, "Fay Moe", "crm:\u200b6", "CTO")             # inside the id: kept
    fay = c.get("/v1/entities", params={"name": "Fay Moe"}).json()["items"]
    assert [e["external_ids"] for e in fay] == [["crm:\u200b6"]], fay
