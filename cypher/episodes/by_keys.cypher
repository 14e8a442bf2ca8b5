// Episodes stored under any of $keys (idempotency keys), within the tenant: a batch append checks them all before
// it writes anything (graphmem.store.episodes.batch_conflict). One past retention at $now as every read treats it
// (unheld; its own retain_until or its session's passed: governance/expired_named_episodes) is left out: it is
// gone to every read, and the write that re-sends its key expires it first and stores the new one.
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.idempotency_key IN $keys
  AND (coalesce(e.legal_hold, false)
       OR ((e.retain_until IS NULL OR e.retain_until > $now)
           AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id})
                            WHERE ss.retain_until <= $now }))
RETURN e {.*, embedding: null, search_terms: null} AS episode
