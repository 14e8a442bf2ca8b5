// Tenants that have claimable extraction jobs (pending and due, or running with an expired lease); as jobs/claim,
// none of an episode past retention at $now (past its own retain_until, or of a session past its retention), which
// the claim never takes: a tenant whose only due jobs are such is not listed.
// tenant-free: the worker discovers which tenants have work; only tenant ids are returned and every claim then
// filters on its own tenant.
MATCH (e:Episode)
WHERE e.extraction_status IN ['pending', 'running']
  AND ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
       OR (e.extraction_status = 'running' AND e.lease_until < $now))
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: e.tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN DISTINCT e.tenant_id AS tenant_id
LIMIT $limit
