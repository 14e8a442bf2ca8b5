// Whether the tenant has claimable jobs (pending and due, or running with an expired lease).
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.extraction_status IN ['pending', 'running']
  AND ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
       OR (e.extraction_status = 'running' AND e.lease_until < $now))
RETURN count(e) > 0 AS due
LIMIT 1
