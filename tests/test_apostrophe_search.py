"""Search reads an apostrophe typed any way as the name keys do: one list, `graphmem.identifiers.APOSTROPHES`, which
`graphmem.store.fulltext.fold` applies before NFKC. Before schema 24 search had its own, shorter list, applied after
NFKC: "Liam O´Neil" (an acute accent, which NFKC makes a space and a combining acute) was indexed as "liam", "o" and
"neil", so "O'Neil" and "ONeil" missed the fact and the entity that name resolution finds by them. Since schema 24
the ʻokina (U+02BB) and the modifier letter prime (U+02B9) are apostrophes too, to the keys and to search: "Hawai'i"
(as users type it), "Hawaiʻi" and "Hawaii" name one entity and find each other. A schema-23 graph gets its terms and
keys again at start-up."""
from __future__ import annotations

import functools

import pytest

from graphmem.identifiers import APOSTROPHES, name_key
from graphmem.models import EntityRef, FactIn
from graphmem.store import fulltext
from graphmem.store.fulltext import search_terms
from graphmem.store.schema import apply_schema, refold_search_terms, rekey_marked_names
from tests.graph_fixture import set_old_name_key
from tests.test_graph_core import matched, msg, stored_terms

T0 = "2024-05-01T09:00:00Z"


def _write(agent, content: str, facts: list[dict]) -> list[str]:
    """An episode saying `content` and `facts` from it, over HTTP; the facts' ids."""
    r = agent.post("/v1/episodes", json={"content": content, "occurred_at": T0, "session_id": "s1", "role": "user"})
    assert r.status_code == 201, r.text
    ep = r.json()["episode"]["id"]
    r = agent.post("/v1/facts", json={"facts": [{**f, "episode_id": ep} for f in facts]})
    assert r.status_code == 200, r.text
    return [o["fact_id"] for o in r.json()["outcomes"]]


def _hits(agent, query: str) -> set[tuple[str, str]]:
    r = agent.post("/v1/search", json={"query": query, "k": 20})
    assert r.status_code == 200, r.text
    return {(h["kind"], h["text"]) for h in r.json()["hits"]}


def _entity_ids(agent, name: str) -> list[str]:
    r = agent.get("/v1/entities", params={"name": name})
    assert r.status_code == 200, r.text
    return [e["id"] for e in r.json()["items"]]


def test_a_search_for_oneil_finds_what_was_written_with_an_acute_accent(client_for, tenant):
    agent = client_for(tenant, "agent")
    _write(agent, "Liam O\u00b4Neil leads the Hilo office",
           [{"subject": {"kind": "Person", "name": "Liam O\u00b4Neil"}, "predicate": "HAS_TITLE",
             "value": "Head of Hilo office"}])
    liam = _entity_ids(agent, "Liam O'Neil")
    assert len(liam) == 1 and _entity_ids(agent, "Liam O\u00b4Neil") == liam     # name resolution: one Liam
    for query in ("O'Neil", "ONeil", "O\u2019Neil", "O\u00b4Neil", "oneil"):
        kinds = {k for k, _ in _hits(agent, query)}
        assert kinds == {"fact", "entity", "episode"}, (query, kinds)


def test_hawaii_with_an_okina_or_an_apostrophe_is_one_entity_found_by_either(client_for, tenant):
    agent = client_for(tenant, "agent")
    _write(agent, "Ana moved to Hawai\u02bbi", [
        {"subject": {"kind": "Person", "name": "Ana Kealoha"}, "predicate": "LOCATED_IN",
         "object": {"kind": "Place", "name": "Hawai\u02bbi"}}])
    _write(agent, "Ben moved to Hawai'i", [
        {"subject": {"kind": "Person", "name": "Ben Kahale"}, "predicate": "LOCATED_IN",
         "object": {"kind": "Place", "name": "Hawai'i"}}])
    _write(agent, "Yuri Kol\u02b9tsov called", [
        {"subject": {"kind": "Person", "name": "Yuri Kol\u02b9tsov"}, "predicate": "HAS_TITLE", "value": "CFO"}])
    hawaii = _entity_ids(agent, "Hawai\u02bbi")
    assert len(hawaii) == 1 and _entity_ids(agent, "Hawai'i") == hawaii == _entity_ids(agent, "Hawaii"), hawaii
    assert _entity_ids(agent, "Yuri Kol'tsov") == _entity_ids(agent, "Yuri Kol\u02b9tsov") != []
    for query in ("Hawai'i", "Hawai\u02bbi", "Hawaii"):
        texts = {t for k, t in _hits(agent, query) if k == "episode"}
        assert texts == {"Ana moved to Hawai\u02bbi", "Ben moved to Hawai'i"}, (query, texts)
    for query in ("Kol'tsov", "Koltsov"):
        assert {k for k, _ in _hits(agent, query)} == {"fact", "entity", "episode"}, query


@pytest.fixture
def before_24(monkeypatch):
    """`graphmem.store.fulltext.search_terms` as it was in schemas 19 to 23: its fold had its own list of apostrophes,
    "\u2019\u2018\u02bc`\u2032" (NFKC leaves each as it is, so reading them before NFKC, as `fold` does now, gives
    the terms it gave after NFKC then)."""
    def old_terms(tenant: str, text: str) -> str:
        with monkeypatch.context() as m:
            m.setattr(fulltext, "_FOLD", str.maketrans({**dict.fromkeys("\u2019\u2018\u02bc`\u2032", "'"),
                                                        **dict.fromkeys(fulltext.INVISIBLE_FORMAT)}))
            return search_terms(tenant, text)
    return old_terms


def test_a_schema_23_graph_gets_the_terms_and_keys_of_text_with_the_new_apostrophes(db, settings, graph, tenant,
                                                                                    before_24):
    from graphmem.recall.models import SearchRequest
    from graphmem.recall.service import RecallService
    from graphmem.store.schema import NEW_APOSTROPHES, REFOLDED_APOSTROPHES, _name_key_before_24

    ep, _ = graph.append_episode(tenant, msg("Liam O\u00b4Neil moved to Hawai\u02bbi"))
    plain, _ = graph.append_episode(tenant, msg("Dana O\u2019Hara called"))
    [liam_fact, moved] = graph.assert_facts(tenant, [
        FactIn(subject=EntityRef(kind="Person", name="Liam O\u00b4Neil"), predicate="HAS_TITLE",
               value="Head of Hawai\u02bbi office", episode_id=ep.id),
        FactIn(subject=EntityRef(kind="Person", name="Liam O\u00b4Neil"), predicate="LOCATED_IN",
               object=EntityRef(kind="Place", name="Hawai\u02bbi"), episode_id=ep.id)])
    hawaii = graph.get_fact(tenant, moved.fact_id).object_id
    recall = RecallService(db, graph)
    terms = functools.partial(stored_terms, db, tenant)

    def age():   # what a schema-23 graph holds: the terms of the old fold, the okina kept in the key
        with db.driver.session(database=db.database) as s:
            for nid, (text, _) in terms().items():
                s.run("MATCH (n {id: $id}) SET n.search_terms = $t", id=nid, t=before_24(tenant, text)).consume()
            s.run("MATCH (f:Fact {id: $id}) SET f.object_key = 'v:' + $k", id=liam_fact.fact_id,
                  k=_name_key_before_24("Head of Hawai\u02bbi office")).consume()
        set_old_name_key(db, tenant, hawaii, _name_key_before_24("Hawai\u02bbi"))

    def found(query):
        return {(h.kind, h.id) for h in recall.search(tenant, SearchRequest(query=query, k=20)).hits}

    def object_key():
        with db.driver.session(database=db.database) as s:
            return s.run("MATCH (f:Fact {id: $id}) RETURN f.object_key", id=liam_fact.fact_id).single()[0]

    expected = terms()
    hits = {q: found(q) for q in ("O'Neil", "Hawai'i")}
    assert ("episode", ep.id) in hits["O'Neil"] and ("entity", hawaii) in hits["Hawai'i"], hits
    assert object_key() == "v:head of hawaii office"
    age()
    aged = terms()
    assert aged != expected and aged[plain.id] == expected[plain.id]
    assert not any(t.endswith(("_oneil", "_hawaii")) for t in aged[ep.id][1].split()), aged[ep.id]
    assert {t for t in expected[ep.id][1].split() if t.endswith(("_oneil", "_hawaii"))}
    assert [e.id for e in graph.find_entities(tenant, "Hawai'i", "Place")] == []
    db.execute("meta/set_schema", version=23, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert terms() == expected and {q: found(q) for q in hits} == hits
    assert [e.id for e in graph.find_entities(tenant, "Hawai'i", "Place")] == [hawaii]
    assert object_key() == "v:head of hawaii office"
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False     # once
    age()
    assert refold_search_terms(db, batch=1, pattern=REFOLDED_APOSTROPHES) >= 3 and terms() == expected
    assert rekey_marked_names(db, batch=1, pattern=NEW_APOSTROPHES, old_key=_name_key_before_24) >= 2
    assert [e.id for e in graph.find_entities(tenant, "Hawaii", "Place")] == [hawaii]

    texts = [f"O{c}Neil" for c in APOSTROPHES + "'\uff40"] + ["Hawai\u02bbi", "Kol\u02b9tsov", "Dana's", "caf\u00e9",
                                                              "a \u00b4 b", "\u0149"]
    terms_read = matched(db, REFOLDED_APOSTROPHES, texts)
    for text in texts:   # every text whose terms change is read again, and only the new apostrophes rekey
        assert terms_read[text] or before_24(tenant, text) == search_terms(tenant, text), text
    keys_read = matched(db, NEW_APOSTROPHES, texts)
    for text in texts:
        assert keys_read[text] or _name_key_before_24(text) == name_key(text), text
    assert terms_read["O\u00b4Neil"] and terms_read["Hawai\u02bbi"] and not terms_read["O\u2019Neil"]
    assert keys_read["Kol\u02b9tsov"] and not keys_read["O\u00b4Neil"]
