// A user's episodes (memories, export, erasure).
// tenant-free: schema statement
CREATE INDEX episode_tenant_user IF NOT EXISTS FOR (n:Episode) ON (n.tenant_id, n.user_id)
