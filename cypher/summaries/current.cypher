// The session's current summary: the highest active revision, leaving out at once what the sweeper will delete (a
// revision covering an episode past retention at $now, and every later revision of it, which carries its text
// forward), as every read does (cypher/sessions/window_state).
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
WHERE NOT EXISTS { MATCH (s)-[:REVISES*0..]->(:Summary)-[:COVERS]->(x) WHERE x.retain_until <= $now }
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
RETURN s {.*} AS summary
ORDER BY s.rev DESC
LIMIT 1
