// The session's current summary: the highest active revision.
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
RETURN s {.*} AS summary
ORDER BY s.rev DESC
LIMIT 1
