// Entities whose name or an alias normalises to $name_key, optionally within one kind ($kind may be null).
MATCH (a:Alias {tenant_id: $tenant_id, name_key: $name_key})-[:ALIAS_OF]->(e:Entity)
WHERE $kind IS NULL OR e.kind = $kind
RETURN DISTINCT e {.*, embedding: null, search_terms: null} AS entity
ORDER BY entity.created_at
LIMIT $limit
