// Size of the session's raw (uncompacted) tail since the window start: episodes and tokens.
// `occurred_at IS NOT NULL` (every episode has one) lets the planner seek episode_tenant_session
// (tenant_id, session_id, occurred_at) instead of scanning the tenant's episodes (a hint: the planner's
// statistics can prefer episode_tenant on a large tenant).
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WHERE NOT coalesce(s.retain_until <= $now, false)
OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
USING INDEX e:Episode(tenant_id, session_id, occurred_at)
WHERE e.occurred_at IS NOT NULL
  AND coalesce(e.seq, 0) >= coalesce(s.window_from_seq, 0)
  AND NOT coalesce(e.retain_until <= $now, false)
  AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
RETURN count(e) AS episodes, coalesce(sum(e.token_count), 0) AS tokens, coalesce(s.window_from_seq, 0) AS from_seq
