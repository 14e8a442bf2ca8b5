"""Edges of the recall API over real HTTP found by trying to break it as a new user: options that would do
nothing, and what the answers say about them."""
from __future__ import annotations

import uuid

import pytest

from tests.test_recall_service import build_crm


@pytest.fixture(scope="module")
def crm_api(graph):
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    return tenant, build_crm(graph, tenant)


def test_fact_only_search_options_without_fact_targets_are_refused(client_for, crm_api):
    """`predicates` and `include_superseded` narrow or widen fact hits only: a search that does not target facts
    took them and answered as if they had been applied (a 200 ignoring them). Now a 422 naming the option, as for
    `mmr_lambda` without `mmr`."""
    tenant, _ = crm_api
    c = client_for(tenant, "analyst")
    for option in ({"predicates": ["WORKS_AT"]}, {"include_superseded": True}):
        for targets in (["episode"], ["entity"], ["episode", "entity"]):
            r = c.post("/v1/search", json={"query": "Dana Globex", "targets": targets, **option})
            assert r.status_code == 422, (option, targets, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")
            field = next(iter(option))
            assert r.json()["field"] == field and r.json()["detail"].startswith(f"{field}:"), r.text
            assert "fact" in r.json()["detail"], r.text
        # with facts among the targets the option applies; its default or an empty list is no option at all
        r = c.post("/v1/search", json={"query": "Dana Globex", "targets": ["fact", "episode"], **option})
        assert r.status_code == 200, r.text
    for same_as_none in ({"predicates": []}, {"predicates": None}, {"include_superseded": False}):
        r = c.post("/v1/search", json={"query": "Dana Globex", "targets": ["episode"], **same_as_none})
        assert r.status_code == 200, (same_as_none, r.text)


def test_a_fact_is_in_a_scope_only_through_provenance_episodes_still_retained(client_for, db, tenant):
    """A search scoped to a session, a user or a time range kept a fact that only an expired episode (past its
    retain_until, not yet swept) of that scope asserted: the hit came back with no `episode_ids` and no
    `provenance` (both leave the expired episode out), while entities and episodes of that scope were already gone.
    The fact itself stays (expiry is not erasure; it lives by its own TTL), cited by the episodes still retained."""
    from tests.test_retention_reads import _expire

    c = client_for(tenant)
    turns = {}
    for sid, user, day in (("s-old", "u-old", "01"), ("s-new", "u-new", "20")):
        r = c.post(f"/v1/sessions/{sid}/turns", json={"idempotency_key": f"k-{sid}", "user_id": user, "episodes": [
            {"content": "Quillon Bank wants the platinum renewal", "occurred_at": f"2024-03-{day}T10:00:00Z"}]})
        assert r.status_code == 201, r.text
        turns[sid] = r.json()["episode_ids"][0]
        r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Organization", "name": "Quillon Bank"},
                                                 "predicate": "INTERESTED_IN", "value": "platinum renewal",
                                                 "episode_id": turns[sid]}]})
        assert r.status_code == 200, r.text

    def hits(**scope):
        r = c.post("/v1/search", json={"query": "Quillon platinum renewal", "targets": ["fact"], **scope})
        assert r.status_code == 200, r.text
        return [(h["episode_ids"], [p["episode_id"] for p in h["provenance"]]) for h in r.json()["hits"]]

    old_scopes = ({"session_id": "s-old"}, {"user_id": "u-old"},
                  {"occurred_after": "2024-03-01T00:00:00Z", "occurred_before": "2024-03-02T00:00:00Z"})
    for scope in old_scopes:
        assert hits(**scope) == [([turns["s-old"]], [turns["s-old"]])], scope
    _expire(db, turns["s-old"])
    for scope in old_scopes:
        assert hits(**scope) == [], scope
    assert hits(session_id="s-new") == [([turns["s-new"]], [turns["s-new"]])]
    assert hits() == [([turns["s-new"]], [turns["s-new"]])]


INVISIBLE_IN_WORDS = ("\u00ad", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\U000e0041")
"""Format characters that show nothing inside a word: soft hyphen (text copied from hyphenated web pages), zero-width
non-joiner and joiner, word joiner, byte-order mark, left-to-right mark, a tag character."""


def test_an_invisible_format_character_inside_a_word_does_not_split_it_for_search(client_for, tenant):
    """The name keys drop invisible format characters ("Ac\u00adme" names Acme), but full-text split a word at
    one: a search for "renewal" missed an episode that said "re\u00adnewal" (a soft hyphen, as text copied from a
    web page holds), and "Zen\u00adtrix" (or with a joiner, a word joiner, a BOM ...) found nothing, nor did
    `GET /v1/entities?name=` with it. The zero-width space stays a space, as it is for the name keys."""
    c = client_for(tenant)
    said = {}
    for i, ch in enumerate(INVISIBLE_IN_WORDS):
        r = c.post("/v1/episodes", json={"content": f"Quarterly re{ch}newal of case {i} for Zentrix",
                                         "occurred_at": "2024-03-01T10:00:00Z", "kind": "text"})
        assert r.status_code == 201, r.text
        said[r.json()["episode"]["id"]] = ch
    r = c.post("/v1/facts", json={"facts": [{"subject": {"kind": "Organization", "name": "Zentrix"},
                                             "predicate": "INTERESTED_IN", "value": "platinum support"}]})
    assert r.status_code == 200, r.text

    def found(query, targets=("episode",)):
        r = c.post("/v1/search", json={"query": query, "targets": list(targets), "k": 20})
        assert r.status_code == 200, r.text
        return {h["id"] for h in r.json()["hits"]}

    assert found("renewal") == set(said), {repr(said[i]) for i in set(said) - found("renewal")}
    for ch in INVISIBLE_IN_WORDS:
        assert found(f"re{ch}newal") == set(said), repr(ch)
        assert [h for h in found(f"Zen{ch}trix", ("entity",))], repr(ch)
        items = c.get("/v1/entities", params={"name": f"Zen{ch}trix"}).json()["items"]
        assert [e["name"] for e in items] == ["Zentrix"], (repr(ch), items)
    assert found("re\u200bnewal") == set()   # a zero-width space separates words: "re" and "newal"
