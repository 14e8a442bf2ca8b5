// Replace a locked pin's typed value and bump its version (the caller checked the expected version under the lock).
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
SET p += $props, p.version = p.version + 1, p.updated_at = $now
REMOVE p._lock
RETURN p {.*} AS pin
