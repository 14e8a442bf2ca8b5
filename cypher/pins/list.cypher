// A session's pins (optionally of one status: active or candidate), by key, paginated.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id})
WHERE $status IS NULL OR p.status = $status
RETURN p {.*, _lock: null} AS pin
ORDER BY p.key
SKIP $offset LIMIT $limit
