// Every tenant id with an entity that carries an attribute an episode may have declared (schema migration 16 -> 17
// records legacy declarations per tenant, meta/backfill_declarations).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n:Entity)
WHERE n.tenant_id IS NOT NULL
  AND (n.email IS NOT NULL OR n.domain IS NOT NULL OR n.summary IS NOT NULL OR size(n.external_ids) > 0
       OR size(n.aliases) > 0)
RETURN DISTINCT n.tenant_id AS tenant_id
