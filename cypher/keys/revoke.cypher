// Revoke a key of the tenant.
MATCH (k:ApiKey {id: $id, tenant_id: $tenant_id})
SET k.revoked_at = coalesce(k.revoked_at, $now)
RETURN k {.*, hash: null} AS key
