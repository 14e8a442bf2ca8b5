// Create a pin (version 1). A concurrent create of the same key fails on the (tenant_id, session_id, key) constraint.
CREATE (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
SET p += $props, p.version = 1, p.created_at = $now, p.updated_at = $now
RETURN p {.*} AS pin
