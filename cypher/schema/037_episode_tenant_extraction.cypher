// Extraction jobs claimed per tenant (workers scoped to tenants).
// tenant-free: schema statement
CREATE INDEX episode_tenant_extraction IF NOT EXISTS FOR (n:Episode) ON (n.tenant_id, n.extraction_status)
