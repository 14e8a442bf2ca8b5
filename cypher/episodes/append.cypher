// Store an episode, idempotent by (tenant, idempotency key). created = false means the key was seen before
// and the first episode is returned unchanged.
MERGE (e:Episode {tenant_id: $tenant_id, idempotency_key: $episode.idempotency_key})
  ON CREATE SET e += $episode, e.created_by_call = $call_id
WITH e, e.created_by_call = $call_id AS created
REMOVE e.created_by_call
RETURN e {.*, embedding: null} AS episode, created
