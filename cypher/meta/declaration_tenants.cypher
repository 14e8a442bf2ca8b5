// Every tenant id with an entity (each carries a name an episode may have declared; schema migration 16 -> 17
// records legacy declarations per tenant, meta/backfill_declarations).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n:Entity)
WHERE n.tenant_id IS NOT NULL
RETURN DISTINCT n.tenant_id AS tenant_id
