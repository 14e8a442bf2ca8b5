// Every episode append and fact batch reads the tenant's settings (retention, fact-class TTLs) by tenant_id.
// tenant-free: schema statement
CREATE INDEX tenant_settings_tenant IF NOT EXISTS FOR (n:TenantSettings) ON (n.tenant_id)
