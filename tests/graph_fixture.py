"""Fixtures for the temporal graph: a schema-applied `Database`, a `TemporalGraph`, and a fresh tenant per test.

Tests share one Neo4j server and isolate themselves by tenant id.
"""
from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Iterator

import pytest

from graphmem.graph import TemporalGraph
from graphmem.settings import Settings
from graphmem.store import Database
from graphmem.store.schema import apply_schema


@pytest.fixture(scope="session")
def settings(neo4j_server: Settings) -> Settings:
    return neo4j_server


@pytest.fixture(scope="session")
def db(settings: Settings) -> Iterator[Database]:
    database = Database.from_settings(settings)
    apply_schema(database, settings.embedding_dimension)
    yield database
    database.close()


@pytest.fixture(scope="session")
def graph(db: Database, settings: Settings) -> TemporalGraph:
    return TemporalGraph(db, settings)


@pytest.fixture
def tenant(request) -> Iterator[str]:
    """A tenant id no other test uses. After a test that used the graph, every fact of the tenant with an entity
    object must still have exactly one RELATED edge mirroring it (checked at teardown: `related_out_of_step`)."""
    tenant_id = f"t-{uuid.uuid4().hex[:12]}"
    yield tenant_id
    if {"db", "graph"} & set(request.fixturenames):
        bad = related_out_of_step(request.getfixturevalue("db"), tenant_id)
        assert not bad, f"RELATED edges out of step with these facts of {tenant_id}: {bad}"


RELATED_FIELDS = ("tenant_id", "predicate", "status", "valid_from", "valid_to", "closed_at", "prior_valid_to",
                  "reclosed_at", "recorded_at",
                  "expired_at", "retain_until", "confidence")


def related_out_of_step(db: Database, tenant_id: str) -> list[str]:
    """Fact ids of the tenant whose derived `(subject)-[:RELATED]->(object)` edge (cypher/facts/create_batch) is
    missing, doubled, between other entities or differs in a copied property, and the fact ids of RELATED edges
    whose fact is gone (test-only raw queries)."""
    with db.driver.session(database=db.database) as s:
        facts = s.run("MATCH (f:Fact {tenant_id: $t})-[:OBJECT]->(o:Entity) MATCH (f)-[:SUBJECT]->(s:Entity) "
                      "RETURN f.id AS id, s.id AS s, o.id AS o, f {.*, embedding: null} AS p", t=tenant_id).data()
        edges = s.run("MATCH (s:Entity {tenant_id: $t})-[l:RELATED]->(o:Entity) "
                      "RETURN l.fact_id AS id, s.id AS s, o.id AS o, properties(l) AS p", t=tenant_id).data()
    by_fact: dict[str, list[dict]] = {}
    for e in edges:
        by_fact.setdefault(e["id"], []).append(e)
    bad = []
    for f in facts:
        want = (f["s"], f["o"], {k: f["p"].get(k) for k in RELATED_FIELDS if f["p"].get(k) is not None})
        got = [(e["s"], e["o"], {k: v for k, v in e["p"].items() if k != "fact_id"}) for e in by_fact.pop(f["id"], [])]
        if got != [want]:
            bad.append(f["id"])
    return bad + sorted(by_fact)


def tenant_node_count(db: Database, tenant_id: str) -> int:
    """How many nodes carry this tenant id (test-only raw query)."""
    return sum(tenant_labels(db, tenant_id).values())


def tenant_labels(db: Database, tenant_id: str) -> Counter[str]:
    """How many nodes carry this tenant id, by label set ("Episode", "Entity:Person"; test-only raw query): compared
    before and after a refused write, a failure names what was left behind."""
    with db.driver.session(database=db.database) as s:
        rows = s.run("MATCH (n) WHERE n.tenant_id = $t RETURN labels(n) AS l", t=tenant_id).value()
    return Counter(":".join(sorted(labels)) for labels in rows)


def stored_keys(db: Database, tenant_id: str, entity_id: str, fact_id: str) -> tuple[str, list[str], str]:
    """The keys a name-key migration rewrites, as stored (test-only raw query): entity `entity_id`'s `name_key`, the
    keys of the aliases linked to it (sorted), and fact `fact_id`'s `object_key`."""
    with db.driver.session(database=db.database) as s:
        return (s.run("MATCH (e:Entity {id: $id}) RETURN e.name_key", id=entity_id).single()[0],
                sorted(s.run("MATCH (a:Alias {tenant_id: $t})-[:ALIAS_OF]->(:Entity {id: $id}) RETURN a.key",
                             t=tenant_id, id=entity_id).value()),
                s.run("MATCH (f:Fact {id: $id}) RETURN f.object_key", id=fact_id).single()[0])


def set_old_name_key(db: Database, tenant_id: str, entity_id: str, key: str, name: str | None = None) -> None:
    """What a graph written by an older `name_key` holds (test-only raw write): Person `entity_id` keyed `key` (and
    named `name`, when given), linked to that key's alias only (its other aliases deleted)."""
    with db.driver.session(database=db.database) as s:
        s.run("MATCH (a:Alias {tenant_id: $t})-[:ALIAS_OF]->(:Entity {id: $id}) DETACH DELETE a",
              t=tenant_id, id=entity_id).consume()
        s.run("MATCH (e:Entity {id: $id}) SET e.name_key = $k, e.name = coalesce($name, e.name) "
              "MERGE (a:Alias {tenant_id: $t, key: 'Person:' + $k}) "
              "ON CREATE SET a.entity_id = e.id, a.name_key = $k MERGE (a)-[:ALIAS_OF]->(e)",
              id=entity_id, k=key, name=name, t=tenant_id).consume()
