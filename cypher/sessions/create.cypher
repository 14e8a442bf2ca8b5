// Create a session (tenant + id) for a user, or return the existing one; created says which. An existing session
// without a user is claimed by $user_id (its user_id set, its episodes stored without a user become that user's;
// claimed = true): the write lock is taken before the user is read, so two users claiming at once serialise and the
// second sees the first as owner. A session of another user is returned unchanged (the caller refuses it).
// The session's retain_until follows last_active_at: + the tenant's session_ttl_days, null without one or when a
// legal hold covers the session (as cypher/episodes/append), so that reads hide it once it is idle past the TTL.
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
MERGE (s:Session {tenant_id: $tenant_id, id: $session_id})
  ON CREATE SET s.created_at = $now, s.last_active_at = $now, s.user_id = $user_id, s.agent_id = $agent_id,
                s.version = 0, s.episode_seq = 0, s.window_from_seq = 0, s.created_by_call = $call_id
SET s._lock = true
WITH s, ts, s.created_by_call = $call_id AS created, s.user_id IS NULL AS claimed
SET s.user_id = coalesce(s.user_id, $user_id)
FOREACH (_ IN CASE WHEN created OR claimed THEN [1] ELSE [] END |
  SET s.retain_until = CASE WHEN ts.session_ttl_days IS NULL OR coalesce(s.legal_hold, false)
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                            OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                          THEN null ELSE s.last_active_at + duration({days: ts.session_ttl_days}) END)
REMOVE s._lock, s.created_by_call
WITH s, created, claimed
CALL (s, claimed) {
  WITH s WHERE claimed
  MATCH (x:Episode {tenant_id: $tenant_id, session_id: $session_id}) WHERE x.occurred_at IS NOT NULL AND x.user_id IS NULL
  SET x.user_id = s.user_id
}
RETURN s {.*} AS session, created, claimed
