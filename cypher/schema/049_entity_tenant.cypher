// Tenant-scoped scans (exact per-tenant vector search, sweeps) start from this index.
// tenant-free: schema statement
CREATE INDEX entity_tenant IF NOT EXISTS FOR (n:Entity) ON (n.tenant_id)
