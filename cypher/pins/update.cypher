// Replace a locked pin's typed value and bump its version (the caller checked the expected version under the lock);
// the session's activity, as pins/create.
// The session's retain_until follows last_active_at: + the tenant's session_ttl_days, null without one or when a
// legal hold covers the session (as cypher/episodes/append), so that reads hide it once it is idle past the TTL.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s.last_active_at = $now)
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.retain_until = CASE WHEN ts.session_ttl_days IS NULL OR coalesce(s.legal_hold, false)
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                          THEN null ELSE s.last_active_at + duration({days: ts.session_ttl_days}) END)
WITH p
SET p += $props, p.version = p.version + 1, p.updated_at = $now
REMOVE p._lock
RETURN p {.*} AS pin
