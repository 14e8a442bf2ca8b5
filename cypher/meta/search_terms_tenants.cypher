// Every tenant id on searchable nodes that have no search_terms yet (schema migration 4 -> 5 backfills them per
// tenant; see graphmem.store.fulltext).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.search_terms IS NULL
RETURN DISTINCT n.tenant_id AS tenant_id
