// Disambiguation candidates for entity mentions that carry no strong identifier (graphmem/ingest/disambiguate.py).
// $mentions: [{idx, kind, alias_key, lucene}]; `lucene` is the whole escaped Lucene query over the mention's name in
// the tenant's prefixed terms (graphmem.store.fulltext.tenant_query; never raw input). Per mention: `exact` (an
// entity of the tenant already owns the mention's name or alias key, so the deterministic resolver decides) and up
// to $fetch full-text hits of the same kind in `entity_text`, the tenant id checked again. Candidates are brief maps
// with the BM25 score.
UNWIND $mentions AS m
CALL (m) {
  OPTIONAL MATCH (:Alias {tenant_id: $tenant_id, key: m.alias_key})-[:ALIAS_OF]->(x:Entity)
  WHERE x.tenant_id = $tenant_id
  RETURN count(x) > 0 AS exact
}
CALL (m) {
  CALL db.index.fulltext.queryNodes('entity_text', m.lucene, {limit: $fetch}) YIELD node, score
  WHERE node.tenant_id = $tenant_id AND node.kind = m.kind
  RETURN collect(node {.id, .kind, .name, .aliases, .summary, score: score}) AS candidates
}
RETURN m.idx AS idx, exact, candidates
