// The stored reply of a turn already appended under this idempotency key, if any.
MATCH (t:TurnReceipt {tenant_id: $tenant_id, session_id: $session_id, key: $key})
RETURN t.result AS result
