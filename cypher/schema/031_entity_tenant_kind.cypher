// tenant-free: schema statement
CREATE INDEX entity_tenant_kind IF NOT EXISTS FOR (n:Entity) ON (n.tenant_id, n.kind)
