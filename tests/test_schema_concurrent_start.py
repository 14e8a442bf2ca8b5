"""Processes that start at once on a fresh database (the API server and `graphmem keys create` run side by side on
first use; found by a helper's hands-on test) all start: before, all but one failed with a raw
`EquivalentSchemaRuleAlreadyExists` or `DeadlockDetected` from the schema statements, and two could leave two schema
records, after which every start warned. On a private Neo4j of its own, since the session's has its schema."""
from __future__ import annotations

import threading

from graphmem.store import Database
from graphmem.store.schema import SCHEMA_VERSION, apply_schema, schema_objects
from tests.neo4j_fixture import private_neo4j


def _records(db: Database) -> list[int]:
    with db.driver.session(database=db.database) as s:
        return [r["version"] for r in s.run("MATCH (m:GraphmemSchema) RETURN m.version AS version")]


def test_processes_starting_at_once_on_a_fresh_database_all_start(tmp_path):
    with private_neo4j(tmp_path / "home") as (_, settings):
        dbs = [Database(settings.neo4j_uri, None) for _ in range(4)]
        try:
            barrier, errors = threading.Barrier(len(dbs)), []

            def start(db: Database) -> None:
                barrier.wait()
                try:
                    apply_schema(db, settings.embedding_dimension)
                except Exception as exc:   # noqa: BLE001 - the test reports every failure
                    errors.append(repr(exc))
            threads = [threading.Thread(target=start, args=(db,)) for db in dbs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert errors == []
            assert _records(dbs[0]) == [SCHEMA_VERSION]
            objects = schema_objects(dbs[0])
            assert "graphmem_schema_id_unique" in {o["name"] for o in objects}
            assert {o["state"] for o in objects} == {"ONLINE"}

            # a database that got two records that way before the constraint keeps the newer one
            with dbs[0].driver.session(database=dbs[0].database) as s:
                s.run("DROP CONSTRAINT graphmem_schema_id_unique").consume()
                s.run("CREATE (:GraphmemSchema {id: 'graphmem', version: 11})").consume()
            assert sorted(_records(dbs[0])) == [11, SCHEMA_VERSION]
            assert apply_schema(dbs[0], settings.embedding_dimension)["version"] == SCHEMA_VERSION
            assert _records(dbs[0]) == [SCHEMA_VERSION]
            assert "graphmem_schema_id_unique" in {o["name"] for o in schema_objects(dbs[0])}
        finally:
            for db in dbs:
                db.close()
