// Delete a locked pin (the caller checked the expected version under the lock). Its value is remembered on the
// session as dismissed ("<value_type>:<value>"), so compaction never proposes it again as a candidate
// (graphmem.context.compaction: a pin the agent deleted stays deleted).
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WITH p, s, p.value_type + ':' + p.value AS dismissed
SET s.dismissed_pins = CASE WHEN dismissed IN coalesce(s.dismissed_pins, []) THEN s.dismissed_pins
                            ELSE coalesce(s.dismissed_pins, []) + dismissed END
DETACH DELETE p
RETURN count(*) AS deleted
