// One pin of a session.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
RETURN p {.*, _lock: null} AS pin
