// Every tenant id with an entity whose email or domain matches $pattern (a character outside ASCII, or a punycode
// "xn--" label): schema migration 20 -> 21 writes those in the one form graphmem.identifiers.email_address and
// domain_name make (graphmem.store.schema.renormalise_identifiers).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Entity)
WHERE e.tenant_id IS NOT NULL AND (e.email =~ $pattern OR e.domain =~ $pattern)
RETURN DISTINCT e.tenant_id AS tenant_id
