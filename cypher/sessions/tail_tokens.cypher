// Size of the session's raw (uncompacted) tail since the window start: episodes and tokens.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
WHERE coalesce(e.seq, 0) >= coalesce(s.window_from_seq, 0)
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
RETURN count(e) AS episodes, coalesce(sum(e.token_count), 0) AS tokens, coalesce(s.window_from_seq, 0) AS from_seq
