// Extend the leases of jobs this worker still holds (heartbeat). $rows: [{id, token}]
UNWIND $rows AS r
MATCH (e:Episode {id: r.id})
WHERE e.tenant_id = $tenant_id AND e.claim_token = r.token AND e.extraction_status = 'running'
SET e.lease_until = $lease_until
RETURN e.id AS id
