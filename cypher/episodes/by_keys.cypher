// Episodes stored under any of $keys (idempotency keys), within the tenant: a batch append checks them all before
// it writes anything (graphmem.store.episodes.batch_conflict).
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.idempotency_key IN $keys
RETURN e {.*, embedding: null, search_terms: null} AS episode
