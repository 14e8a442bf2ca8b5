// Add or replace one of the tenant's own predicates.
MERGE (p:Predicate {tenant_id: $tenant_id, name: $predicate.name})
SET p += $predicate
RETURN p {.*} AS predicate
