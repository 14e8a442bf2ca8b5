// Those of sessions $session_ids that the sweeper would expire at $now (governance/expired_sessions for named
// sessions): idle since before $now minus the tenant's session_ttl_days (last_active_at), with no legal hold on
// the session, its user, or one of its episodes. Nothing when the tenant has no session TTL. A write to such a
// session expires it first, so that the write cannot revive what retention already ended.
MATCH (ts:TenantSettings {tenant_id: $tenant_id})
WHERE ts.session_ttl_days IS NOT NULL
UNWIND $session_ids AS sid
MATCH (s:Session {tenant_id: $tenant_id, id: sid})
WHERE s.last_active_at <= $now - duration({days: ts.session_ttl_days})
  AND NOT EXISTS { MATCH (h:LegalHold {tenant_id: $tenant_id})
                   WHERE (h.target_kind = 'session' AND h.target_id = s.id)
                      OR (h.target_kind = 'user' AND h.target_id = s.user_id) }
  AND NOT EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, session_id: s.id}) WHERE e.legal_hold = true }
RETURN s.id AS id
