"""Fixtures for the temporal graph: a schema-applied `Database`, a `TemporalGraph`, and a fresh tenant per test.

Tests share one Neo4j server and isolate themselves by tenant id.
"""
from __future__ import annotations

import uuid
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
def tenant() -> str:
    """A tenant id no other test uses."""
    return f"t-{uuid.uuid4().hex[:12]}"


def tenant_node_count(db: Database, tenant_id: str) -> int:
    """How many nodes carry this tenant id (test-only raw query)."""
    with db.driver.session(database=db.database) as s:
        return s.run("MATCH (n) WHERE n.tenant_id = $t RETURN count(n) AS c", t=tenant_id).single()["c"]
