// Revoke a key of the tenant (idempotent: an earlier revocation time is kept). revoked_now: this call revoked it.
// The first SET takes the key's write lock before revoked_at is read, so of concurrent calls (revocations,
// rotations) one sees the key unrevoked and every other one sees that call's revocation once it has committed.
MATCH (k:ApiKey {id: $id, tenant_id: $tenant_id})
SET k.lock_seq = coalesce(k.lock_seq, 0) + 1
WITH k
WITH k, k.revoked_at IS NULL AS revoked_now
SET k.revoked_at = coalesce(k.revoked_at, $now)
RETURN k {.*, hash: null, lock_seq: null} AS key, revoked_now
