// Episodes stored under any of $keys (idempotency keys), within the tenant: a batch append checks them all before
// it writes anything (graphmem.store.episodes.batch_conflict). One past its own retention at $now (unheld) is left
// out: it is gone to every read, and the write that re-sends its key expires it first
// (governance/expired_named_episodes) and stores the new one.
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.idempotency_key IN $keys
  AND (e.retain_until IS NULL OR e.retain_until > $now OR coalesce(e.legal_hold, false))
RETURN e {.*, embedding: null, search_terms: null} AS episode
