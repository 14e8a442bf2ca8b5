"""An apostrophe typed any way names one entity: "Liam O'Neil" with the straight apostrophe, a right single quotation
mark (U+2019), a modifier letter apostrophe (U+02BC, which autocorrect and some keyboard layouts give), an acute
accent (U+00B4), a backtick, a fullwidth apostrophe or a prime (graphmem.identifiers.APOSTROPHES). Before schema 22
"Liam OʼNeil" keyed "liam oʼneil" (U+02BC is a letter to Unicode) and "Liam O´Neil" "liam o ́neil" (NFKC makes the
acute accent a space and a combining acute): each was a second Liam. A schema-21 graph gets its keys again at
start-up; two entities whose names now key alike are namesakes, logged with both ids, not merged."""
from __future__ import annotations

import logging

from graphmem.identifiers import APOSTROPHES, name_key, value_key
from graphmem.models import EntityRef, FactIn
from graphmem.store.schema import APOSTROPHE_VARIANTS, _name_key_before_22, apply_schema, rekey_marked_names
from tests.graph_fixture import set_old_name_key, stored_keys
from tests.test_graph_core import matched, msg

SPELLINGS = ("Liam O\u2019Neil", "Liam O\u02bcNeil", "Liam O\u00b4Neil", "Liam O`Neil", "Liam O\uff07Neil",
             "Liam O\u2018Neil", "LIAM O\u2032NEIL", "liam oneil")


def test_an_apostrophe_typed_any_way_names_one_entity(graph, tenant):
    ep, _ = graph.append_episode(tenant, msg("Liam's title"))
    [first] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Liam O'Neil"),
                                                 predicate="HAS_TITLE", value="Head of O'Reilly Books",
                                                 episode_id=ep.id)])
    liam = graph.get_fact(tenant, first.fact_id).subject_id
    for name in SPELLINGS:
        assert [e.id for e in graph.find_entities(tenant, name, "Person")] == [liam], name
        [again] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=name),
                                                     predicate="HAS_TITLE", value="Head of O\u02bcReilly Books",
                                                     episode_id=ep.id)])
        assert (again.action, again.fact_id) == ("duplicate", first.fact_id), name
    # a space after it still ends a word, whichever apostrophe it is ("Dunkin' Donuts" is "Dunkin Donuts")
    spaced = graph.upsert_entity(tenant, EntityRef(kind="Person", name="Liam O' Neil")).id
    assert spaced != liam
    assert graph.upsert_entity(tenant, EntityRef(kind="Person", name="Liam O\u02bc Neil")).id == spaced
    assert graph.upsert_entity(tenant, EntityRef(kind="Person", name="Liam O\u02bc\u200bNeil")).id == spaced
    assert {name_key(n) for n in SPELLINGS} == {"liam oneil"}
    assert value_key("\u02bc") == value_key("'") == value_key("\u00b4")      # a value of an apostrophe alone
    assert name_key("Hawai\u02bbi") == name_key("Hawai'i") == "hawaii"           # the okina too (schema 24)


def _as_before_22(db, tenant, entity_id, name, fact_id=None, value=None):
    """What a schema-21 graph holds: entity `entity_id` named `name` under the key `name_key` made of it then, and
    fact `fact_id`'s value `value` keyed as `value_key` made it then (test-only raw writes)."""
    set_old_name_key(db, tenant, entity_id, _name_key_before_22(name), name)
    if fact_id:
        with db.driver.session(database=db.database) as s:
            s.run("MATCH (f:Fact {id: $id}) SET f.value = $v, f.object_key = 'v:' + $k", id=fact_id, v=value,
                  k=_name_key_before_22(value)).consume()


def test_a_schema_21_graph_gets_the_keys_of_names_with_an_apostrophe_again(db, settings, graph, tenant):
    ep, _ = graph.append_episode(tenant, msg("Liam's title"))
    [first] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Liam O\u02bcNeil"),
                                                 predicate="HAS_TITLE", value="Head of O\u00b4Reilly Books",
                                                 episode_id=ep.id)])
    liam = graph.get_fact(tenant, first.fact_id).subject_id
    expected = stored_keys(db, tenant, liam, first.fact_id)
    assert expected == ("liam oneil", ["Person:liam oneil"], "v:head of oreilly books")

    def age():
        _as_before_22(db, tenant, liam, "Liam O\u02bcNeil", first.fact_id, "Head of O\u00b4Reilly Books")

    age()
    assert stored_keys(db, tenant, liam, first.fact_id) == ("liam o\u02bcneil", ["Person:liam o\u02bcneil"],
                                                      "v:head of o \u0301reilly books")
    assert graph.find_entities(tenant, "Liam O'Neil", "Person") == []           # the old key: found by no spelling
    db.execute("meta/set_schema", version=21, embedding_dimension=settings.embedding_dimension)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    assert stored_keys(db, tenant, liam, first.fact_id) == expected
    assert [e.id for e in graph.find_entities(tenant, "Liam O'Neil", "Person")] == [liam]
    [again] = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Liam O'Neil"),
                                                 predicate="HAS_TITLE", value="Head of O'Reilly Books",
                                                 episode_id=ep.id)])
    assert (again.action, again.fact_id) == ("duplicate", first.fact_id)
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False     # once
    age()
    assert rekey_marked_names(db, batch=1, pattern=APOSTROPHE_VARIANTS, old_key=_name_key_before_22) >= 2
    assert stored_keys(db, tenant, liam, first.fact_id) == expected

    texts = ["Liam O'Neil", "Liam Oneil", *SPELLINGS, "Hawai\u02bbi", "Head of O\u00b4Reilly"]
    read = matched(db, APOSTROPHE_VARIANTS, texts)
    assert read["Liam O\u02bcNeil"] and read["Liam O\u00b4Neil"] and not read["Liam O'Neil"], read
    for text in texts:   # every name whose key changes is read again
        assert read[text] or _name_key_before_22(text) == name_key(text), text
    assert all(c in APOSTROPHES for c in "\u2019\u02bc\u00b4`\uff07\u2018\u2032")


def test_the_schema_22_migration_reports_entities_that_now_share_a_key(db, settings, graph, tenant, caplog):
    """Before schema 22 "Liam O'Neil" and "Liam OʼNeil" keyed apart, so a graph may hold both as two people. The
    migration gives them one key: they become namesakes (a name alone is ambiguous, an id names each), nothing is
    merged, and a warning names both."""
    ep, _ = graph.append_episode(tenant, msg("two Liams"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Ada Ng"), predicate="KNOWS",
                                       object=EntityRef(kind="Person", name=n), episode_id=ep.id)
                                for n in ("Liam O'Neil", "Liam Placeholder")])
    [a] = graph.find_entities(tenant, "Liam O'Neil", "Person")
    [b] = graph.find_entities(tenant, "Liam Placeholder", "Person")
    _as_before_22(db, tenant, b.id, "Liam O\u02bcNeil")      # the second Liam a schema-21 graph could hold
    db.execute("meta/set_schema", version=21, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        apply_schema(db, settings.embedding_dimension)
    [warning] = [r.getMessage() for r in caplog.records if tenant in r.getMessage()]
    assert f"{b.id} with {a.id}" in warning and "namesakes" in warning, warning
    for name in ("Liam O'Neil", "Liam O\u02bcNeil"):
        assert sorted(e.id for e in graph.find_entities(tenant, name, "Person")) == sorted([a.id, b.id]), name
    assert (graph.get_entity(tenant, a.id).name, graph.get_entity(tenant, b.id).name) == \
        ("Liam O'Neil", "Liam O\u02bcNeil")                      # not merged
