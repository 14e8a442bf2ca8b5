// The tenant's sessions (optionally of one user), most recently active first, paginated.
MATCH (s:Session {tenant_id: $tenant_id})
WHERE $user_id IS NULL OR s.user_id = $user_id
RETURN s {.*} AS session
ORDER BY s.last_active_at DESC, s.id
SKIP $offset LIMIT $limit
