// Record a turn's reply under its idempotency key, with the fingerprint of the turn and of each of its fields (JSON)
// (the first one wins). The
// session's write lock is taken first: two tries of one turn sent at once serialise here, and the second finds the
// first one's receipt (created = false, with that receipt's result and fingerprint) instead of writing a second
// one (MERGE alone is not atomic without a uniqueness constraint). The session always exists when a turn gets here.
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END | SET s._lock = true REMOVE s._lock)
WITH count(*) AS locked
MERGE (t:TurnReceipt {tenant_id: $tenant_id, session_id: $session_id, key: $key})
  ON CREATE SET t.result = $result, t.fingerprint = $fingerprint, t.fields = $fields, t.created_at = $now, t.created_by_call = $call_id
WITH t, coalesce(t.created_by_call = $call_id, false) AS created
REMOVE t.created_by_call
RETURN t.result AS result, t.fingerprint AS fingerprint, t.fields AS fields, created
