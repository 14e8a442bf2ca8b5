"""The session-wide Neo4j server for tests.

`neo4j_server` yields a `Settings` pointing at a server: the one named by the environment's
NEO4J_URI if set, else a `LocalNeo4j` started for this session in a pytest temp dir on a free port
(the distribution cache is the normal one, so it is fetched only once per machine) and stopped at
the end. NEO4J_URI is exported in `os.environ` for subprocesses started by tests.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from graphmem.localneo4j import LocalNeo4j
from graphmem.settings import Settings, get_settings


def schema_lock_held(db, name: str):
    """Open a session and in it a transaction creating the index `name` (on `Entity`), left open: until it is rolled
    back it holds the schema lock, so every query Neo4j has to plan waits for it (a Neo4j that does not answer).
    Returns (session, transaction); the caller rolls the transaction back (no index is made) and closes the
    session."""
    holder = db.driver.session()
    hold = holder.begin_transaction()
    hold.run(f"CREATE INDEX {name} IF NOT EXISTS FOR (n:Entity) ON (n.{name})").consume()
    return holder, hold


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def private_neo4j(home: Path) -> Iterator[tuple[LocalNeo4j, Settings]]:
    """A small LocalNeo4j of its own (heap 512m, page cache 64m, a free port, data under `home`) for tests that
    change the whole database or stop the server; yields (server, settings pointing at it) and stops it on exit."""
    server = LocalNeo4j(Settings(home=home, cache_dir=Settings().cache_dir, local_neo4j_port=free_port(),
                                 local_neo4j_heap="512m", local_neo4j_pagecache="64m",
                                 NEO4J_URI=None, NEO4J_PASSWORD=None))
    uri = server.start(timeout_s=180)
    try:
        yield server, Settings(NEO4J_URI=uri, NEO4J_PASSWORD=None)
    finally:
        server.stop()


@pytest.fixture(scope="session")
def local_neo4j(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalNeo4j | None]:
    """The LocalNeo4j started for this session, or None when NEO4J_URI names an existing server."""
    if os.environ.get("NEO4J_URI"):
        yield None
        return
    settings = Settings(home=tmp_path_factory.mktemp("graphmem-home"),
                        cache_dir=Settings().cache_dir, local_neo4j_port=free_port(), local_neo4j_heap="1g",
                        NEO4J_URI=None, NEO4J_PASSWORD=None)
    server = LocalNeo4j(settings)
    os.environ["NEO4J_URI"] = server.start(timeout_s=180)
    get_settings.cache_clear()      # code that reads the process settings (the CLI in-process) must see it
    try:
        yield server
    finally:
        os.environ.pop("NEO4J_URI", None)
        get_settings.cache_clear()
        server.stop()


@pytest.fixture(scope="session")
def neo4j_server(local_neo4j: LocalNeo4j | None) -> Settings:
    """Settings whose neo4j_uri (and auth) point at the session's Neo4j server."""
    if local_neo4j is None:
        return Settings()
    return local_neo4j.settings.model_copy(update={"neo4j_uri": local_neo4j.uri})
