// Set each session's legal_hold flag (a hold on the session, on its user, or on one of its episodes, by the
// episodes' legal_hold flags: the sweeper's selection, governance/expired_sessions) and its retain_until =
// last_active_at + $days (null when $days is null or the session is held; a session whose retain_until had passed
// at $now keeps it: it is gone to every read already, as after the sweep, and a longer TTL set since does not bring
// it back (governance/expired_sessions selects it); held, a hold placed after it expired keeps it from the sweep,
// not readable again),
// where either differs. The writes that
// move last_active_at stamp retain_until as they go (cypher/episodes/append, pins/*, sessions/create and
// reset_window); this pass follows a change of the tenant's settings or holds. Reads hide a session, its turns,
// pins and summaries once its retain_until is past. Returns how many sessions changed.
MATCH (s:Session {tenant_id: $tenant_id})
WITH s, EXISTS { MATCH (h:LegalHold {tenant_id: $tenant_id})
                 WHERE (h.target_kind = 'session' AND h.target_id = s.id)
                    OR (h.target_kind = 'user' AND h.target_id = s.user_id) }
        OR EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, session_id: s.id}) WHERE e.legal_hold = true } AS held
WITH s, held, CASE WHEN s.retain_until <= $now THEN s.retain_until
                   WHEN held OR $days IS NULL THEN null
                   ELSE s.last_active_at + duration({days: $days}) END AS until
WHERE coalesce(s.legal_hold, false) <> held OR (s.retain_until IS NULL) <> (until IS NULL) OR s.retain_until <> until
SET s.legal_hold = held, s.retain_until = until
RETURN count(s) AS stamped
