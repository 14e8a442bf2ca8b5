// Claim up to $limit extraction jobs of the tenant for one worker: pending jobs whose retry time has come, and
// running jobs whose lease expired (their worker died: crash-resume). One write query: each candidate's write lock
// is taken (SET _claim_lock) before the claim condition is read again, so of two concurrent claimers only the
// first to lock sees the job claimable; the other skips it (the Neo4j "lost update" pattern). Candidates are a
// random $limit of the oldest $window due jobs, so concurrent claimers mostly pick different jobs; locks are taken
// in id order (no deadlock between claimers). As every read of the episode (jobs/get), none of an episode past
// retention at $now (past its own retain_until, or of a session past its retention): its content is not sent to the
// LLM; it stays as it is for the sweeper.
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.extraction_status IN ['pending', 'running']
  AND ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
       OR (e.extraction_status = 'running' AND e.lease_until < $now))
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
WITH e ORDER BY e.ingested_at, e.id LIMIT $window
WITH e ORDER BY rand() LIMIT $limit
WITH e ORDER BY e.id
SET e._claim_lock = true
WITH e, ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
         OR (e.extraction_status = 'running' AND e.lease_until < $now)) AS claimable,
     e.extraction_status = 'running' AS recovered
REMOVE e._claim_lock
WITH e, recovered WHERE claimable
SET e.extraction_status = 'running', e.claimed_by = $worker_id, e.claim_token = $token,
    e.lease_until = $lease_until, e.claimed_at = $now, e.attempts = coalesce(e.attempts, 0) + 1,
    e.recovered_from_crash = recovered
RETURN e {.*, embedding: null, search_terms: null} AS episode
