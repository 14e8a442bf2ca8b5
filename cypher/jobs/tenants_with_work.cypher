// Tenants that have claimable extraction jobs (pending and due, or running with an expired lease).
// tenant-free: the worker discovers which tenants have work; only tenant ids are returned and every claim then
// filters on its own tenant.
MATCH (e:Episode)
WHERE e.extraction_status IN ['pending', 'running']
  AND ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
       OR (e.extraction_status = 'running' AND e.lease_until < $now))
RETURN DISTINCT e.tenant_id AS tenant_id
LIMIT $limit
