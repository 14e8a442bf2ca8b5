// The tenant's sessions (optionally of one user), most recently active first, paginated. Not those past their retention
// (retain_until: idle longer than the tenant's session_ttl_days), as after the sweep.
MATCH (s:Session {tenant_id: $tenant_id})
WHERE ($user_id IS NULL OR s.user_id = $user_id) AND NOT coalesce(s.retain_until <= $now, false)
RETURN s {.*} AS session
ORDER BY s.last_active_at DESC, s.id
SKIP $offset LIMIT $limit
