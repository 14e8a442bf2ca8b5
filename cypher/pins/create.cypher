// Create a pin: version 1, or one past the version of the last pin deleted under the key in this session
// (retired_pin_versions, cypher pins/delete), so that a write that read the deleted pin is stale against this one.
// A concurrent create of the same key fails on the (tenant_id, session_id, key) constraint. An agent's pin write is
// the session's activity (last_active_at: the window's idle TTL and the retention's session TTL count from it).
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s.last_active_at = $now)
WITH s, [r IN coalesce(s.retired_pin_versions, []) WHERE r STARTS WITH $key + ':' |
      toInteger(substring(r, size($key) + 1))] AS retired
CREATE (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
SET p += $props, p.version = coalesce(retired[0], 0) + 1, p.created_at = $now, p.updated_at = $now
RETURN p {.*} AS pin
