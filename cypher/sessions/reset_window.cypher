// Start the session's window afresh (TTL expiry) unless it is still live: the lock is taken first so two callers
// cannot both reset. Old turns stay stored; only episodes with seq >= window_from_seq enter the window.
// The session's retain_until follows last_active_at: + the tenant's session_ttl_days, null without one or when a
// legal hold covers the session (as cypher/episodes/append), so that reads hide it once it is idle past the TTL.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
SET s._lock = true
WITH s, ts, s.last_active_at < $idle_before AS expired
FOREACH (_ IN CASE WHEN expired THEN [1] ELSE [] END |
  SET s.window_from_seq = coalesce(s.episode_seq, 0) + 1, s.window_reset_at = $now, s.last_active_at = $now,
      s.version = coalesce(s.version, 0) + 1
  SET s.retain_until = CASE WHEN ts.session_ttl_days IS NULL OR coalesce(s.legal_hold, false)
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                          THEN null ELSE s.last_active_at + duration({days: ts.session_ttl_days}) END)
REMOVE s._lock
RETURN s {.*} AS session, expired
