// Those of sessions $session_ids that are past their retention at $now and unheld (no legal hold on the session,
// its user, or one of its episodes): idle since before $now minus the tenant's session_ttl_days (last_active_at:
// what the sweeper would expire, governance/expired_sessions) or past their stamped retain_until (what every read
// already hides, e.g. episodes/get; a stamp a settings change has not restamped yet may be earlier). A write to
// such a session expires it first, so that the write cannot revive what retention already ended.
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
UNWIND $session_ids AS sid
MATCH (s:Session {tenant_id: $tenant_id, id: sid})
WHERE (s.retain_until <= $now
       OR CASE WHEN ts.session_ttl_days IS NULL THEN false
               ELSE s.last_active_at <= $now - duration({days: ts.session_ttl_days}) END)
  AND NOT EXISTS { MATCH (h:LegalHold {tenant_id: $tenant_id})
                   WHERE (h.target_kind = 'session' AND h.target_id = s.id)
                      OR (h.target_kind = 'user' AND h.target_id = s.user_id) }
  AND NOT EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, session_id: s.id}) WHERE e.legal_hold = true }
RETURN s.id AS id
