// Pin candidates from compaction: created only for keys the session has no pin for; an existing pin (active or
// candidate) is never touched. A candidate continues the versions of a pin deleted under its key (as pins/create).
// Returns the keys actually created.
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WITH coalesce(s.retired_pin_versions, []) AS retired
UNWIND $rows AS row
MERGE (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: row.key})
  ON CREATE SET p.value_type = row.value_type, p.value = row.value, p.attrs = row.attrs, p.status = 'candidate',
                p.set_by = row.set_by, p.written_by = 'compactor', p.created_at = $now, p.updated_at = $now,
                p.created_by_call = $call_id,
                p.version = coalesce(head([r IN retired WHERE r STARTS WITH row.key + ':' |
                                           toInteger(substring(r, size(row.key) + 1))]), 0) + 1
WITH p, p.created_by_call = $call_id AS created
REMOVE p.created_by_call
WITH p, created WHERE created
RETURN p.key AS key
