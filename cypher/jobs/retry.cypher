// Put a failed, dead or skipped job back in the queue with a fresh attempt budget. Returns nothing if the job is
// in another state (pending, running, done) or is the record of explicit facts (reason $explicit: nothing to
// extract), or its episode is past retention at $now (as jobs/get: past its own retain_until, or of a session past
// its retention), which no read shows.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.extraction_status IN ['failed', 'dead', 'skipped']
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
  AND coalesce(e.extraction_reason, '') <> $explicit
SET e.extraction_status = 'pending', e.attempts = 0, e.not_before = null, e.extraction_reason = null,
    e.finished_at = null, e.retried_at = $now
RETURN e.id AS id
