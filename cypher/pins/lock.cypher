// Lock a session's pin for a read-check-write (optimistic concurrency): returns whether the session exists and the
// pin as last committed (null if none). The SET takes the node's write lock before the version is read.
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | SET p._lock = true)
WITH s, p
RETURN s IS NOT NULL AS session_exists, CASE WHEN p IS NULL THEN null ELSE p {.*, _lock: null} END AS pin
