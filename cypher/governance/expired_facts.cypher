// Up to $limit facts whose retention ended at $now and that no held episode supports.
MATCH (f:Fact {tenant_id: $tenant_id})
WHERE f.retain_until <= $now
  AND NOT EXISTS { (f)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND e.legal_hold = true }
RETURN f.id AS id
ORDER BY f.retain_until
LIMIT $limit
