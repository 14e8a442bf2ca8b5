// The session's raw tail: episodes since the window start that no active summary covers, newest first.
MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
WHERE coalesce(e.seq, 0) >= $from_seq
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
RETURN e {.*, embedding: null} AS episode
ORDER BY e.occurred_at DESC, e.seq DESC
LIMIT $limit
