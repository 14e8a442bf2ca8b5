// Those of sessions $session_ids that every read treats as past retention at $now (retain_until <= $now, as
// sessions/get hides them) but that a legal hold keeps from the sweep (a hold on the session or its user, or one of
// its episodes held). A write naming such a session is refused (graphmem.governance.sweeper.Sweeper
// .expire_idle_sessions): it may neither expire the held data nor revive it. One row: their ids.
UNWIND $session_ids AS sid
MATCH (s:Session {tenant_id: $tenant_id, id: sid})
WHERE s.retain_until <= $now
  AND (EXISTS { MATCH (h:LegalHold {tenant_id: $tenant_id})
                WHERE (h.target_kind = 'session' AND h.target_id = s.id)
                   OR (h.target_kind = 'user' AND h.target_id = s.user_id) }
       OR EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, session_id: s.id}) WHERE e.legal_hold = true })
RETURN collect(s.id) AS ids
