// A session's summary revisions (active and rolled back), newest first, paginated. Like every read, it leaves out
// at once what the sweeper will delete: a revision covering an episode past retention at $now, and every later
// revision of it (its text carries the expired turn forward).
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id})
WHERE NOT EXISTS { MATCH (s)-[:REVISES*0..]->(:Summary)-[:COVERS]->(x) WHERE x.retain_until <= $now }
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
RETURN s {.*} AS summary, COUNT { (s)-[:COVERS]->() } AS covers
ORDER BY s.rev DESC
SKIP $offset LIMIT $limit
