// Every tenant id with an external id whose key matches $pattern (a character graphmem.identifiers.blank finds blank at
// either end; or 'user:' and such an id, schema 22 -> 23): schema migration 20 -> 21 trims those as
// graphmem.identifiers.trim_blank now does (graphmem.store.schema.retrim_external_ids).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (x:ExternalId)
WHERE x.tenant_id IS NOT NULL AND x.key =~ $pattern
RETURN DISTINCT x.tenant_id AS tenant_id
