// How many of the tenant's extraction jobs are in each state. As jobs/claim and every read of the episode (jobs/get),
// none of an episode past retention at $now (past its own retain_until, or of a session past its retention): it is
// gone to every read before the sweeper removes it.
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e.extraction_status AS status, count(e) AS jobs
