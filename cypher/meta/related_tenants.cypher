// Every tenant id with a fact that has an entity object but no RELATED edge yet (schema migration 5 -> 6
// backfills them per tenant, meta/backfill_related).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (f:Fact)-[:OBJECT]->(:Entity)
WHERE f.tenant_id IS NOT NULL AND NOT EXISTS { ()-[:RELATED {fact_id: f.id}]->() }
RETURN DISTINCT f.tenant_id AS tenant_id
