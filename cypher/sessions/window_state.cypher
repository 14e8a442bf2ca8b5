// Everything a window needs from the graph in one round trip: the session, its pins (by key), its current summary
// and its raw tail; expired episodes, and summaries built on them, are left out at once (episodes since the window start that no active summary covers, newest first, at most $limit).
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
CALL (s) {
  OPTIONAL MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id})
  WITH p ORDER BY p.key
  RETURN collect(p {.*, _lock: null}) AS pins
}
CALL (s) {
  OPTIONAL MATCH (m:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
  WHERE NOT EXISTS { MATCH (m)-[:COVERS]->(x:Episode) WHERE x.retain_until <= $now }
  WITH m ORDER BY m.rev DESC LIMIT 1
  RETURN collect(m {.*}) AS summaries
}
CALL (s) {
  OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
  WHERE coalesce(e.seq, 0) >= coalesce(s.window_from_seq, 0)
    AND (e.retain_until IS NULL OR e.retain_until > $now)
    AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
  WITH e ORDER BY e.occurred_at DESC, e.seq DESC LIMIT $limit
  RETURN collect(e {.*, embedding: null}) AS tail
}
RETURN s {.*} AS session, pins, summaries, tail
