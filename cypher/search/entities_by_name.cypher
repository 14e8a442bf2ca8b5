// Entity lookup for the analyst: by full-text over name and aliases ($opt.lucene) when given, else every entity
// of the tenant (optionally of one kind) by name. Paginated with $offset/$limit; $opt.lucene is the whole Lucene
// query over the tenant's prefixed terms (graphmem.store.fulltext.tenant_query) and the tenant id is checked again
// before SKIP/LIMIT.
// The full-text branch reads the $fetch best hits; when it read that many, the hits scoring as low as the lowest
// read come back `tied`: Lucene cut a group of equal scores at $fetch (1,200 entities named "Pager ... Person N"
// all score alike), and others of that score may sort before them by name, so the caller reads again deeper
// (graphmem.recall.service.RecallService.find_entities). Hits above that score are all read.
CALL () {
  WITH $opt.lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_text', q, {limit: $fetch}) YIELD node, score
  WITH collect({n: node, score: score}) AS hits, min(score) AS floor
  UNWIND hits AS h
  WITH h.n AS node, h.score AS score, size(hits) = $fetch AND h.score = floor AS tied
  WHERE node.tenant_id = $tenant_id
  RETURN node AS n, score, tied
  UNION ALL
  WITH $opt.lucene AS q WHERE q IS NULL
  MATCH (node:Entity)
  WHERE node.tenant_id = $tenant_id AND node.kind IS NOT NULL
  RETURN node AS n, 0.0 AS score, false AS tied
}
WITH n, score, tied
WHERE $opt.kind IS NULL OR n.kind = $opt.kind
RETURN n {.*, embedding: null, search_terms: null, search_text: null} AS entity, score, tied
ORDER BY score DESC, entity.name, entity.id
SKIP $offset LIMIT $limit
