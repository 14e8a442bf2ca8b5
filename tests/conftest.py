"""Shared pytest fixtures. Each group lives in its own module under tests/ and is imported here."""
from tests.graph_fixture import db, graph, settings, tenant  # noqa: F401
from tests.http_fixture import api_url, client_for, make_key, services  # noqa: F401
from tests.ingest_fixture import fake_llm, llm_services, make_services  # noqa: F401
from tests.neo4j_fixture import local_neo4j, neo4j_server  # noqa: F401
from tests.context_fixture import make_context  # noqa: F401
