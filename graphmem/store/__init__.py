"""The store: graphmem's only door to Neo4j. Services call it; it runs named queries from `cypher/`."""
from graphmem.store.db import Database, live, require_named_tenant, require_tenant, tenant_token, whole

__all__ = ["Database", "live", "require_named_tenant", "require_tenant", "tenant_token", "whole"]
