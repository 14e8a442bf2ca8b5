// The session's raw tail: episodes since the window start that no active summary covers, newest first.
// `occurred_at IS NOT NULL` (every episode has one) lets the planner seek episode_tenant_session
// (tenant_id, session_id, occurred_at) instead of scanning the tenant's episodes (a hint: the planner's
// statistics can prefer episode_tenant on a large tenant).
MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
USING INDEX e:Episode(tenant_id, session_id, occurred_at)
WHERE e.occurred_at IS NOT NULL
  AND coalesce(e.seq, 0) >= $from_seq
  AND NOT coalesce(e.retain_until <= $now, false)
  AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
RETURN e {.*, embedding: null, search_terms: null} AS episode
ORDER BY e.occurred_at DESC, e.seq DESC
LIMIT $limit
