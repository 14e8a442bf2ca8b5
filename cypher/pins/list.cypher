// A session's pins (optionally of one status: active or candidate), by key, paginated; none when the
// session is past its retention (retain_until), as after the sweep.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id})
WHERE ($status IS NULL OR p.status = $status)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
RETURN p {.*, _lock: null} AS pin
ORDER BY p.key
SKIP $offset LIMIT $limit
