// Store a new API key: only its SHA-256 hash and a short display prefix are kept.
CREATE (k:ApiKey {id: $id, tenant_id: $tenant_id, role: $role, name: $name, hash: $hash, prefix: $prefix,
                  created_at: $now, revoked_at: null})
RETURN k {.*, hash: null} AS key
