// The episode stored under an idempotency key, if any.
MATCH (e:Episode {tenant_id: $tenant_id, idempotency_key: $idempotency_key})
RETURN e {.*, embedding: null} AS episode
