// tenant-free: schema statement
CREATE INDEX fact_tenant_predicate IF NOT EXISTS FOR (n:Fact) ON (n.tenant_id, n.predicate)
