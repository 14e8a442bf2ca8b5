// The pin values deleted from sessions $session_ids (`dismissed_pins`, "<value_type>:<value>", cypher pins/delete),
// each session write-locked first (SET then REMOVE of a marker property; in id order, so two lockers never
// deadlock) for the rest of the transaction: a pin delete that commits before is read, one after waits for the
// erasure. One row per session with dismissals.
MATCH (s:Session)
WHERE s.id IN $session_ids AND s.tenant_id = $tenant_id
WITH s ORDER BY s.id
SET s._lock = true
REMOVE s._lock
WITH s
WHERE s.dismissed_pins IS NOT NULL
RETURN s.id AS id, s.dismissed_pins AS dismissed
