// Entities whose name or an alias normalises to $name_key, optionally within one kind ($kind may be null).
// Oldest first; entities written in one batch share their created_at, so the id breaks the tie (pages of
// GET /v1/entities?name= neither repeat nor skip one).
MATCH (a:Alias {tenant_id: $tenant_id, name_key: $name_key})-[:ALIAS_OF]->(e:Entity)
WHERE $kind IS NULL OR e.kind = $kind
RETURN DISTINCT e {.*, embedding: null, search_terms: null} AS entity
ORDER BY entity.created_at, entity.id
LIMIT $limit
