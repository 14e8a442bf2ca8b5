// Every entity of the tenant (optionally of one kind, $opt.kind) by name, then id: the $limit after the first
// $offset, cut here (reading offset + limit entities into Python to slice them took 4.2 s at offset 10,000). An
// entity lookup by a name's words is search/entities_by_text.
MATCH (node:Entity)
WHERE node.tenant_id = $tenant_id AND node.kind IS NOT NULL AND ($opt.kind IS NULL OR node.kind = $opt.kind)
RETURN node {.*, embedding: null, search_terms: null, search_text: null} AS entity
ORDER BY entity.name, entity.id
SKIP $offset LIMIT $limit
