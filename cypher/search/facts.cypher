// Hybrid fact retrieval, phase one (rank): full-text (fact_text, Lucene BM25), vector (fact_embedding, cosine) and
// graph proximity to the seed entities, each ranked within itself. Only ids, ranks and the statement come back;
// the few facts that win fusion are read by search/hydrate.
// Full-text requires the tenant's token inside Lucene; vector similarity is exact over the tenant's facts
// (vector.similarity.cosine: the shared vector index cannot filter by tenant). Candidates ($fetch per retriever) are
// filtered BEFORE each retriever keeps its top $limit.
// Filters: valid at $as_of (unless $include_superseded) as known at $known_at, never candidates, never past
// retention ($now), optional predicates, entity kinds, and scope through provenance (session, user, occurred_at).
// Returns one row: hits, a list of {reasons [{retriever, rank, score}], id, text (the statement, for MMR)}
// (one row, not one per hit: each Bolt record costs the Python driver ~30 µs).
// Times ($now, $as_of, $known_at, $occurred_after, $occurred_before) arrive as ISO-8601 strings (or null) and are
// parsed once, into the map `t`: the Python driver spends ~40 µs packing each datetime parameter.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      occurred_after: datetime($occurred_after), occurred_before: datetime($occurred_before)} AS t
CALL () {
  WITH $lucene AS q WHERE q IS NOT NULL
  CALL db.index.fulltext.queryNodes('fact_text', '+tenant_token:' + $tenant_token + ' +statement:(' + q + ')',
                                     {limit: $fetch}) YIELD node, score
  RETURN 'fulltext' AS retriever, node AS f, score
  UNION ALL
  WITH $vector AS v WHERE v IS NOT NULL
  MATCH (node:Fact {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL
  WITH node, vector.similarity.cosine(node.embedding, v) AS score ORDER BY score DESC LIMIT $fetch
  RETURN 'vector' AS retriever, node AS f, score
  UNION ALL
  UNWIND $seed_ids AS seed_id
  MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(f:Fact)
  WHERE s.tenant_id = $tenant_id
  RETURN 'graph' AS retriever, f, 1.0 AS score
  UNION ALL
  UNWIND $seed_ids AS seed_id
  MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(:Fact)-[:SUBJECT|OBJECT]->(n:Entity)<-[:SUBJECT|OBJECT]-(f:Fact)
  WHERE s.tenant_id = $tenant_id AND n <> s
  WITH f LIMIT $fetch
  RETURN 'graph' AS retriever, f, 0.5 AS score
}
WITH t, retriever, f, sum(score) AS score
WHERE f.tenant_id = $tenant_id
  AND f.status <> 'candidate'
  AND (f.retain_until IS NULL OR f.retain_until > t.now)
  AND ($predicates IS NULL OR f.predicate IN $predicates)
  AND f.recorded_at <= t.known_at
  AND (f.expired_at IS NULL OR f.expired_at > t.known_at)
  AND ($include_superseded OR (f.valid_from <= t.as_of
       AND (f.valid_to IS NULL OR f.valid_to > t.as_of OR f.closed_at > t.known_at)))
  AND ($entity_kinds IS NULL OR EXISTS { MATCH (f)-[:SUBJECT|OBJECT]->(x:Entity) WHERE x.kind IN $entity_kinds })
  AND (NOT $scoped OR EXISTS {
        MATCH (f)-[:DERIVED_FROM]->(e:Episode)
        WHERE ($session_id IS NULL OR e.session_id = $session_id) AND ($user_id IS NULL OR e.user_id = $user_id)
          AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
          AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before) })
WITH retriever, f, score ORDER BY score DESC, f.valid_from DESC
WITH retriever, collect({f: f, score: score})[..$limit] AS top
UNWIND range(0, size(top) - 1) AS i
WITH top[i].f AS f, collect({retriever: retriever, rank: i + 1, score: top[i].score}) AS reasons
RETURN collect({reasons: reasons, id: f.id,
                text: f.statement}) AS hits
