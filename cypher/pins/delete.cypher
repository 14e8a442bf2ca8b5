// Delete a locked pin (the caller checked the expected version under the lock).
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
DETACH DELETE p
RETURN count(*) AS deleted
