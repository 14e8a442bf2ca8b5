// Entity lookup for the analyst: by full-text over name and aliases ($opt.lucene) when given, else every entity
// of the tenant (optionally of one kind) by name. Paginated with $offset/$limit; $opt.lucene is the whole Lucene
// query over the tenant's prefixed terms (graphmem.store.fulltext.tenant_query) and the tenant id is checked again
// before SKIP/LIMIT.
CALL () {
  WITH $opt.lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_text', q, {limit: $fetch}) YIELD node, score
  WHERE node.tenant_id = $tenant_id
  RETURN node AS n, score
  UNION ALL
  WITH $opt.lucene AS q WHERE q IS NULL
  MATCH (node:Entity)
  WHERE node.tenant_id = $tenant_id AND node.kind IS NOT NULL
  RETURN node AS n, 0.0 AS score
}
WITH n, score
WHERE $opt.kind IS NULL OR n.kind = $opt.kind
RETURN n {.*, embedding: null, search_terms: null, search_text: null} AS entity, score
ORDER BY score DESC, entity.name, entity.id
SKIP $offset LIMIT $limit
