// Every tenant id present on searchable nodes (schema migration 1 -> 2 backfills tenant_token per tenant).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.tenant_token IS NULL
RETURN DISTINCT n.tenant_id AS tenant_id
