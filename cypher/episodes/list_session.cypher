// A session's episodes in NEXT-chain order (occurred_at, then arrival), paginated.
MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
WHERE (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
RETURN e {.*, embedding: null, search_terms: null} AS episode
ORDER BY e.occurred_at, e.seq
SKIP $offset LIMIT $limit
