// Entities by id, within the tenant. Ids of other tenants simply do not match.
MATCH (e:Entity)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
RETURN e {.*, embedding: null, search_terms: null} AS entity
