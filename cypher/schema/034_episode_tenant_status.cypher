// Extraction jobs are claimed by status.
// tenant-free: schema statement
CREATE INDEX episode_tenant_status IF NOT EXISTS FOR (n:Episode) ON (n.extraction_status)
