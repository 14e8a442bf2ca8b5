// Revoke a key of the tenant (idempotent: an earlier revocation time is kept). revoked_now: this call revoked it
// (the write lock on the key makes one of two concurrent calls see the other's revocation).
MATCH (k:ApiKey {id: $id, tenant_id: $tenant_id})
WITH k, k.revoked_at IS NULL AS revoked_now
SET k.revoked_at = coalesce(k.revoked_at, $now)
RETURN k {.*, hash: null} AS key, revoked_now
