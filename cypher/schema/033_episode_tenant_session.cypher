// tenant-free: schema statement
CREATE INDEX episode_tenant_session IF NOT EXISTS FOR (n:Episode) ON (n.tenant_id, n.session_id, n.occurred_at)
