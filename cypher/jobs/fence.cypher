// Lock a claimed job and tell whether this worker still holds it (same claim token, still running), and whether its
// episode is still within retention at $now (as jobs/get: not past its own retain_until, nor of a session past its
// retention). Run first in the transaction that writes the job's facts, so a worker whose lease was taken over, or
// whose episode passed retention since the claim, writes nothing.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id
SET e._fence_lock = true
WITH e, (e.claim_token = $token AND e.extraction_status = 'running') AS held,
     ((e.retain_until IS NULL OR e.retain_until > $now)
      AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
     AS retained
REMOVE e._fence_lock
RETURN held, retained
