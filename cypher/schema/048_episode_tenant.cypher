// Tenant-scoped scans (exact per-tenant vector search, sweeps) start from this index.
// tenant-free: schema statement
CREATE INDEX episode_tenant IF NOT EXISTS FOR (n:Episode) ON (n.tenant_id)
