// Replace a locked pin's typed value and bump its version (the caller checked the expected version under the lock);
// the session's activity, as pins/create.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s.last_active_at = $now)
WITH p
SET p += $props, p.version = p.version + 1, p.updated_at = $now
REMOVE p._lock
RETURN p {.*} AS pin
