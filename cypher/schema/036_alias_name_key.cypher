// Name lookups without a kind ("find Dana") go through the alias's bare normalised name.
// tenant-free: schema statement
CREATE INDEX alias_tenant_name IF NOT EXISTS FOR (n:Alias) ON (n.tenant_id, n.name_key)
