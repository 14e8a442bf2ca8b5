// Delete a locked pin (the caller checked the expected version under the lock). What it held is remembered on the
// session as dismissed ($dismissed: "<value_type>:<value>" strings, graphmem.context.pins.value_keys: a human
// gate's approval id too), so compaction never proposes it again as a candidate (a pin the agent deleted stays
// deleted).
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
SET s.dismissed_pins = coalesce(s.dismissed_pins, []) + [d IN $dismissed WHERE NOT d IN coalesce(s.dismissed_pins, [])]
DETACH DELETE p
RETURN count(*) AS deleted
