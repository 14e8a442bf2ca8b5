// Lock a session's pin for a read-check-write (optimistic concurrency): returns whether the session exists and the
// pin as last committed (null if none). The SET takes the node's write lock before the version is read. The pin
// is read again once locked: a writer that deleted it while this one waited for its lock leaves no pin (null),
// not the deleted node, whose properties read as none (from_row failed on it: a 500 where a stale write is a 409).
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | SET p._lock = true)
WITH s, p
OPTIONAL MATCH (q:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key}) WHERE q = p
RETURN s IS NOT NULL AS session_exists, CASE WHEN q IS NULL THEN null ELSE q {.*, _lock: null} END AS pin
