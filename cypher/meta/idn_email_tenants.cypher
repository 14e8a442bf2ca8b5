// Every tenant id with an entity whose email matches $pattern (a character outside ASCII, or a punycode "xn--"
// label): schema migration 20 -> 21 writes those emails in the one form graphmem.models.email_address makes
// (graphmem.store.schema.renormalise_emails).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Entity)
WHERE e.tenant_id IS NOT NULL AND e.email =~ $pattern
RETURN DISTINCT e.tenant_id AS tenant_id
