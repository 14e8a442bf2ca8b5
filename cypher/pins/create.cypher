// Create a pin: version 1, or one past the version of the last pin deleted under the key in this session
// (retired_pin_versions, cypher pins/delete), so that a write that read the deleted pin is stale against this one.
// A concurrent create of the same key fails on the (tenant_id, session_id, key) constraint. An agent's pin write is
// the session's activity (last_active_at: the window's idle TTL and the retention's session TTL count from it).
// The session's retain_until follows last_active_at: + the tenant's session_ttl_days, null without one or when a
// legal hold covers the session (as cypher/episodes/append), so that reads hide it once it is idle past the TTL.
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s.last_active_at = $now)
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.retain_until = CASE WHEN ts.session_ttl_days IS NULL OR coalesce(s.legal_hold, false)
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                          THEN null ELSE s.last_active_at + duration({days: ts.session_ttl_days}) END)
WITH s, [r IN coalesce(s.retired_pin_versions, []) WHERE r STARTS WITH $key + ':' |
      toInteger(substring(r, size($key) + 1))] AS retired
CREATE (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
SET p += $props, p.version = coalesce(retired[0], 0) + 1, p.created_at = $now, p.updated_at = $now
RETURN p {.*} AS pin
