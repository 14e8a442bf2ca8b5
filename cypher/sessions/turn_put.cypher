// Record a turn's reply under its idempotency key, with the fingerprint of the turn (the first one wins).
MERGE (t:TurnReceipt {tenant_id: $tenant_id, session_id: $session_id, key: $key})
  ON CREATE SET t.result = $result, t.fingerprint = $fingerprint, t.created_at = $now
RETURN t.result AS result
