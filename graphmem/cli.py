"""The `graphmem` command line. `graphmem --help` lists the commands; each has `--help`.

Settings come from the environment and a `.env` file (see `graphmem.settings`).
"""
from __future__ import annotations

import json
import sys

import click

from graphmem.settings import Settings, get_settings


def _fail(msg: str) -> None:
    click.echo(f"error: {msg}", err=True)
    sys.exit(1)


@click.group()
def main() -> None:
    """graphmem: temporal knowledge-graph memory for AI agents."""


@main.group()
def neo4j() -> None:
    """Manage the locally managed Neo4j 5.26 server (used when NEO4J_URI is not set)."""


@neo4j.command("start")
@click.option("--timeout", default=180.0, show_default=True, help="Seconds to wait for the server.")
def neo4j_start(timeout: float) -> None:
    """Start the local server (fetching Neo4j once into the cache); prints its bolt URI."""
    from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
    try:
        click.echo(LocalNeo4j(get_settings()).start(timeout))
    except LocalNeo4jError as e:
        _fail(str(e))


@neo4j.command("stop")
def neo4j_stop() -> None:
    """Stop the local server."""
    from graphmem.localneo4j import LocalNeo4j
    click.echo("stopped" if LocalNeo4j(get_settings()).stop() else "not running")


@neo4j.command("status")
def neo4j_status() -> None:
    """Print the local server's state as JSON."""
    from graphmem.localneo4j import LocalNeo4j
    click.echo(json.dumps(LocalNeo4j(get_settings()).status(), indent=2, default=str))


def open_graph(settings: Settings | None = None, start_local: bool = True):
    """Connect (starting the local Neo4j if NEO4J_URI is unset), apply the schema, return a `TemporalGraph`."""
    from graphmem.graph import TemporalGraph
    from graphmem.localneo4j import LocalNeo4j, LocalNeo4jError
    from graphmem.store import Database
    from graphmem.store.schema import apply_schema
    settings = settings or get_settings()
    if not settings.neo4j_uri and start_local:
        try:
            LocalNeo4j(settings).start()
        except LocalNeo4jError as e:
            _fail(str(e))
    db = Database.from_settings(settings)
    apply_schema(db, settings.embedding_dimension, migrate=settings.allow_schema_migration)
    return TemporalGraph(db, settings)


@main.command()
def demo() -> None:
    """Load a small CRM story into tenant "demo" and print current facts, a history and a provenance."""
    from graphmem import demo as demo_mod
    graph = open_graph()
    try:
        demo_mod.run(graph)
    finally:
        graph.db.close()


if __name__ == "__main__":
    main()
