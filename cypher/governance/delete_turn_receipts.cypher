// Delete turn receipts (the context service's idempotent replies) of erased sessions $session_ids, and those of
// sessions $touched_sessions whose stored reply names an erased episode in $episode_ids.
MATCH (t:TurnReceipt {tenant_id: $tenant_id})
WHERE t.session_id IN $session_ids
   OR (t.session_id IN $touched_sessions AND any(eid IN $episode_ids WHERE t.result CONTAINS eid))
DETACH DELETE t
RETURN count(*) AS deleted
