// Whether the tenant holds any fact of $predicate (current, closed or expired: all of them read by its definition).
OPTIONAL MATCH (f:Fact {tenant_id: $tenant_id, predicate: $predicate})
WITH f LIMIT 1
RETURN f IS NOT NULL AS used
