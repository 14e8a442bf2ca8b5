// Lock a claimed job and tell whether this worker still holds it (same claim token, still running). Run first in
// the transaction that writes the job's facts, so a worker whose lease was taken over writes nothing.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id
SET e._fence_lock = true
WITH e, (e.claim_token = $token AND e.extraction_status = 'running') AS held
REMOVE e._fence_lock
RETURN held
