// Lock the session node (serialises compactions and rollbacks of one session) and return the highest revision.
MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id})
SET ss._lock = true
WITH ss
OPTIONAL MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id})
WITH ss, max(s.rev) AS max_rev
REMOVE ss._lock
RETURN coalesce(max_rev, 0) AS max_rev
