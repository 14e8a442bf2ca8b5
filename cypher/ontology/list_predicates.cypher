// The tenant's own predicates (extensions of the shipped ontology).
MATCH (p:Predicate {tenant_id: $tenant_id})
RETURN p {.*} AS predicate
ORDER BY p.name
