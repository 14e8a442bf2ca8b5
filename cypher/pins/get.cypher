// One pin of a session; none when the session is past its retention (retain_until), as after the sweep.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
WHERE NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
RETURN p {.*, _lock: null} AS pin
