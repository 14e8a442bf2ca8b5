// Tenant-scoped scans (exact per-tenant vector search, sweeps) start from this index.
// tenant-free: schema statement
CREATE INDEX fact_tenant IF NOT EXISTS FOR (n:Fact) ON (n.tenant_id)
