// A tenant's keys, never with their secret (only the prefix is shown).
MATCH (k:ApiKey {tenant_id: $tenant_id})
RETURN k {.*, hash: null} AS key
ORDER BY k.created_at, k.id
SKIP $offset LIMIT $limit
