"""Schema 21: an external id is stored trimmed of the characters `graphmem.identifiers.blank` finds blank at either end
(`trim_blank`), where only whitespace was trimmed before, so "crm:1\\u200b" and "crm:1" named two entities. A graph
from before may hold such a key: start-up stores it trimmed, so a reference by the trimmed id finds its entity; an
entity that holds both forms keeps one ExternalId, declared by the episodes that declared either; when another
entity holds the trimmed id, the key stays as written and a warning names both (they are not merged)."""
from __future__ import annotations

import logging

from graphmem.identifiers import trim_blank
from graphmem.models import EntityRef, FactIn
from graphmem.store.schema import apply_schema, blank_ends
from tests.test_graph_core import matched, msg


def _person(graph, tenant: str, name: str, ids: list[str], episode: str | None = None) -> str:
    """The id of Person `name` with external ids `ids`, given by a fact of `episode` (a new one when None)."""
    ep = episode or graph.append_episode(tenant, msg(f"{name} is the CTO."))[0].id
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=name, external_ids=ids),
                                       predicate="HAS_TITLE", value="CTO", episode_id=ep)])
    return graph.upsert_entity(tenant, EntityRef(external_ids=ids[:1])).id


def _as_stored(db, tenant: str, key: str, stored: str) -> None:
    """Rewrites external id `key` as `stored`, as a schema-20 graph may hold it (a test-only raw write)."""
    with db.driver.session(database=db.database) as s:
        s.run("MATCH (x:ExternalId {tenant_id: $t, key: $k})-[:IDENTIFIES]->(e:Entity) SET x.key = $v, "
              "e.external_ids = [i IN e.external_ids | CASE WHEN i = $k THEN $v ELSE i END]", t=tenant, k=key, v=stored)


def _declarers(db, tenant: str, key: str) -> set[str]:
    with db.driver.session(database=db.database) as s:
        return {r["id"] for r in s.run("MATCH (ep:Episode)-[:DECLARED]->(:ExternalId {tenant_id: $t, key: $k}) "
                                       "RETURN ep.id AS id", t=tenant, k=key)}


def test_schema_20_graph_gets_its_external_ids_trimmed(db, settings, graph, tenant, caplog):
    ann = _person(graph, tenant, "Ann Lee", ["crm:1"])
    _as_stored(db, tenant, "crm:1", "crm:1\u200b")
    first = graph.append_episode(tenant, msg("Bea Ray is the CTO."))[0].id
    second = graph.append_episode(tenant, msg("Bea Ray, the CTO."))[0].id
    bea = _person(graph, tenant, "Bea Ray", ["crm:2"], first)
    assert _person(graph, tenant, "Bea Ray", ["crm:2", "crm:2b"], second) == bea
    with db.driver.session(database=db.database) as s:   # the second declared the other form only
        s.run("MATCH (ep:Episode {tenant_id: $t, id: $ep})-[d:DECLARED]->(:ExternalId {key: 'crm:2'}) DELETE d",
              t=tenant, ep=second)
    _as_stored(db, tenant, "crm:2b", "\ufeffcrm:2")
    cal = _person(graph, tenant, "Cal Dunn", ["crm:3x"])
    cal_two = _person(graph, tenant, "Cal Two", ["crm:3"])
    _as_stored(db, tenant, "crm:3x", "crm:3\U000e0020")
    dee = _person(graph, tenant, "Dee Fox", ["crm:4x"])
    _as_stored(db, tenant, "crm:4x", "\u200b")                 # blank alone: no trimmed form, stays
    eve = _person(graph, tenant, "Eve Hale", ["crm:\u200b5"])  # inside: kept

    db.execute("meta/set_schema", version=20, embedding_dimension=settings.embedding_dimension)
    with caplog.at_level(logging.WARNING, logger="graphmem.store.schema"):
        assert apply_schema(db, settings.embedding_dimension)["migrated"] is True
    ids = {"ann": ann, "bea": bea, "cal": cal, "cal_two": cal_two, "dee": dee, "eve": eve}
    stored = {who: graph.get_entity(tenant, i).external_ids for who, i in ids.items()}
    assert stored == {"ann": ["crm:1"], "bea": ["crm:2"], "cal": ["crm:3\U000e0020"], "cal_two": ["crm:3"],
                      "dee": ["\u200b"], "eve": ["crm:\u200b5"]}, stored
    assert graph.upsert_entity(tenant, EntityRef(external_ids=["crm:1"])).id == ann
    assert graph.upsert_entity(tenant, EntityRef(external_ids=["crm:2\ufeff"])).id == bea
    assert _declarers(db, tenant, "crm:2") == {first, second}
    assert _declarers(db, tenant, "\ufeffcrm:2") == set()
    assert f"{cal} ('crm:3', held by {cal_two})" in caplog.text, caplog.text
    assert apply_schema(db, settings.embedding_dimension)["migrated"] is False   # once

    keys = ("crm:1\u200b", "\ufeffcrm:2", "crm:3\U000e0020", " crm:4 ", "crm:5\U000e0100", "crm:6\u3164",
            "\u00adcrm:7", "crm:8\u2800", "crm:\u200b9", "crm:10", "\u200b", "crm:11\u0600")
    read = matched(db, blank_ends(), keys)
    for key in keys:   # every key whose trimmed form differs is read again
        assert read[key] or trim_blank(key) == key, key
    assert not read["crm:\u200b9"] and not read["crm:10"], read
