// External ids (e.g. 'hubspot:123') as their own nodes so lookups use a unique index.
// tenant-free: schema statement
CREATE CONSTRAINT external_id_unique IF NOT EXISTS FOR (n:ExternalId) REQUIRE (n.tenant_id, n.key) IS UNIQUE
