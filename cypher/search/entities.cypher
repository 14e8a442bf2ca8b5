// Hybrid entity retrieval, phase one (rank; search/hydrate reads the winners): full-text (entity_text over name + aliases, Lucene BM25), vector (entity_embedding,
// cosine) and graph proximity (entities one fact away from a seed, over facts valid at $as_of).
// Full-text requires the tenant's token inside Lucene; vector similarity is exact over the tenant's entities
// (vector.similarity.cosine, no cross-tenant index). Candidates ($fetch per retriever) are filtered to the tenant
// (and $entity_kinds, created by $known_at) BEFORE each retriever keeps its top $limit. Returns one row: hits, a list of
// {reasons [{retriever, rank, score}], id, text (name and aliases, for MMR)}.
// Times ($now, $as_of, $known_at) arrive as ISO-8601 strings (or null) and are parsed once, into the map `t`:
// the Python driver spends ~40 µs packing each datetime parameter.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at)} AS t
CALL (t) {
  WITH $lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('entity_text', '+tenant_token:' + $tenant_token + ' +search_text:(' + q + ')',
                                     {limit: $fetch}) YIELD node, score
  RETURN 'fulltext' AS retriever, node AS n, score
  UNION ALL
  WITH $vector AS v WHERE v IS NOT NULL
  MATCH (node:Entity {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL
  WITH node, vector.similarity.cosine(node.embedding, v) AS score ORDER BY score DESC LIMIT $fetch
  RETURN 'vector' AS retriever, node AS n, score
  UNION ALL
  UNWIND $seed_ids AS seed_id
  MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(n:Entity)
  WHERE s.tenant_id = $tenant_id AND f.tenant_id = $tenant_id AND n <> s AND f.status <> 'candidate'
    AND f.expired_at IS NULL AND f.valid_from <= t.as_of AND (f.valid_to IS NULL OR f.valid_to > t.as_of)
    AND (f.retain_until IS NULL OR f.retain_until > t.now)
  RETURN 'graph' AS retriever, n, 1.0 AS score
}
WITH t, retriever, n, sum(score) AS score
WHERE n.tenant_id = $tenant_id AND n.created_at <= t.known_at AND ($entity_kinds IS NULL OR n.kind IN $entity_kinds)
WITH retriever, n, score ORDER BY score DESC, n.updated_at DESC
WITH retriever, collect({n: n, score: score})[..$limit] AS top
UNWIND range(0, size(top) - 1) AS i
WITH top[i].n AS n, collect({retriever: retriever, rank: i + 1, score: top[i].score}) AS reasons
RETURN collect({reasons: reasons, id: n.id,
                text: n.name + CASE WHEN size(coalesce(n.aliases, [])) = 0 THEN '' ELSE ' (' + reduce(a = '', x IN n.aliases | a + CASE WHEN a = '' THEN '' ELSE ', ' END + x) + ')' END}) AS hits
