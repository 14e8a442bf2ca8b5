// Whether the tenant has claimable jobs (pending and due, or running with an expired lease); as jobs/claim, none of
// an episode past retention at $now (past its own retain_until, or of a session past its retention), which the claim
// never takes: a tenant whose only due jobs are such has none.
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.extraction_status IN ['pending', 'running']
  AND ((e.extraction_status = 'pending' AND coalesce(e.not_before, $now) <= $now)
       OR (e.extraction_status = 'running' AND e.lease_until < $now))
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN count(e) > 0 AS due
LIMIT 1
