// The pin values deleted from a session ("<value_type>:<value>", cypher pins/delete): compaction proposes none of
// them again. No row for an unknown session.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
RETURN coalesce(s.dismissed_pins, []) AS dismissed
