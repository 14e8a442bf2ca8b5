// A session's summary revisions (active and rolled back), newest first, paginated.
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id})
RETURN s {.*} AS summary, COUNT { (s)-[:COVERS]->() } AS covers
ORDER BY s.rev DESC
SKIP $offset LIMIT $limit
