// Authenticate: the key's hash names its tenant and role. This is how a request finds its tenant.
// tenant-free: the lookup that discovers the tenant from a key hash; returns only that key's tenant
MATCH (k:ApiKey {hash: $hash})
RETURN k.id AS id, k.tenant_id AS tenant_id, k.role AS role, k.revoked_at AS revoked_at
