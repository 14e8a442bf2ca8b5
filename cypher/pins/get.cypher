// One pin of a session; none when the session is past its retention (retain_until), as after the sweep, nor when it
// is a candidate (compaction's proposal, unconfirmed) whose source turn (set_by) is past retention, its own or its
// session's (as pins/list).
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
WHERE NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
  AND NOT (p.status = 'candidate' AND EXISTS {
        MATCH (e:Episode {tenant_id: $tenant_id, id: p.set_by})
        WHERE e.retain_until <= $now
           OR EXISTS { MATCH (es:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE es.retain_until <= $now } })
RETURN p {.*, _lock: null} AS pin
