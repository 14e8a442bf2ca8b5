// The stored reply of a turn already appended under this idempotency key, if any, with the fingerprint of the turn
// it answered (null for receipts written before fingerprints were kept) and its per-field fingerprints (JSON; null
// for receipts written before those were kept).
MATCH (t:TurnReceipt {tenant_id: $tenant_id, session_id: $session_id, key: $key})
RETURN t.result AS result, t.fingerprint AS fingerprint, t.fields AS fields
