// Up to $limit sessions idle since before $cutoff (last_active_at; session TTL; null: no TTL), or past a
// retain_until that had passed before the TTL was made longer or removed (governance/stamp_session_retention keeps
// it: every read hides them), with no legal hold on the session, its user, or one of its episodes.
MATCH (s:Session {tenant_id: $tenant_id})
WHERE (s.last_active_at <= $cutoff OR s.retain_until <= $now)
  AND NOT EXISTS { MATCH (h:LegalHold {tenant_id: $tenant_id})
                   WHERE (h.target_kind = 'session' AND h.target_id = s.id)
                      OR (h.target_kind = 'user' AND h.target_id = s.user_id) }
  AND NOT EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, session_id: s.id}) WHERE e.legal_hold = true }
RETURN s.id AS id
ORDER BY s.last_active_at
LIMIT $limit
