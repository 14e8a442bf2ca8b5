// The tenant's retention settings node (none until an admin sets them).
MATCH (s:TenantSettings {tenant_id: $tenant_id})
RETURN s {.*} AS settings
