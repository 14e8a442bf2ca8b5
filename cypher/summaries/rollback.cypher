// Roll back the current revision: it is kept but marked rolled_back; the revision it revised is current again, and
// the episodes only the rolled-back revision covered return to the raw tail.
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
WITH s ORDER BY s.rev DESC LIMIT 1
SET s.status = 'rolled_back', s.rolled_back_at = $now
RETURN s {.*} AS summary
