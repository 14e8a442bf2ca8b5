// Hybrid search, phase one (rank), for the target kinds in $targets ("entity", "fact", "episode"); search/hydrate
// then reads the few winners of fusion. Each kind has up to three retrievers, each ranked within itself:
//   full-text (Lucene BM25 over fact_text / episode_text / entity_text; the query requires the tenant's token inside
//     Lucene),
//   vector (cosine, exact over the tenant's own nodes: the shared vector index cannot filter by tenant),
//   graph proximity to the seed entities ($seed_ids): facts touching a seed (1.0) or one entity further (0.5);
//     episodes that mention a seed (1.0) or are provenance of a seed's facts (0.5); entities one valid fact away.
// Candidates ($fetch per retriever) are filtered BEFORE each retriever keeps its top $limit:
//   facts: tenant, valid at $as_of (unless $include_superseded) as known at $known_at, never candidates, never past
//     retention ($now), optional $predicates, $entity_kinds, and scope through provenance ($scoped: session, user,
//     occurred_at range);
//   episodes: tenant, retention, transaction time ($known_at vs ingested_at), valid time (nothing after $as_of) and
//     the scope filters;
//   entities: tenant, $entity_kinds, created by $known_at.
// One row: entity_hits, fact_hits, episode_hits, each a list of {reasons [{retriever, rank, score}], id, text (what
// MMR compares: a fact's statement, an episode's speaker-prefixed content, an entity's name and aliases)}; an
// episode hit also has `reply` ({id, text} or null): when it asks something (its content has a '?'), the next
// episode of its session (NEXT) by another speaker, if that passes the same filters.
// Cost notes: one query and one row, not one query per kind and one Bolt record per hit (each query costs the
// Python driver and the server a round trip; each record ~30 µs in the driver). Times ($now, $as_of, $known_at,
// $occurred_after, $occurred_before) arrive as ISO-8601 strings (or null), parsed once into the map `t`: the driver
// packs a datetime parameter in ~40 µs.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      occurred_after: datetime($occurred_after), occurred_before: datetime($occurred_before)} AS t
CALL (t) {
  WITH t WHERE 'entity' IN $targets
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
                  text: n.name + CASE WHEN size(coalesce(n.aliases, [])) = 0 THEN ''
                                      ELSE ' (' + reduce(a = '', x IN n.aliases | a + CASE WHEN a = '' THEN '' ELSE ', ' END + x)
                                           + ')' END}) AS entity_hits
}
CALL (t) {
  WITH t WHERE 'fact' IN $targets
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
                  text: f.statement}) AS fact_hits
}
CALL (t) {
  WITH t WHERE 'episode' IN $targets
  CALL () {
    WITH $lucene AS q WHERE q IS NOT NULL
    CALL db.index.fulltext.queryNodes('episode_text', '+tenant_token:' + $tenant_token + ' +content:(' + q + ')',
                                       {limit: $fetch}) YIELD node, score
    RETURN 'fulltext' AS retriever, node AS e, score
    UNION ALL
    WITH $vector AS v WHERE v IS NOT NULL
    MATCH (node:Episode {tenant_id: $tenant_id}) WHERE node.embedding IS NOT NULL
    WITH node, vector.similarity.cosine(node.embedding, v) AS score ORDER BY score DESC LIMIT $fetch
    RETURN 'vector' AS retriever, node AS e, score
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:MENTIONS]-(e:Episode)
    WHERE s.tenant_id = $tenant_id
    RETURN 'graph' AS retriever, e, 1.0 AS score
    UNION ALL
    UNWIND $seed_ids AS seed_id
    MATCH (s:Entity {id: seed_id})<-[:SUBJECT|OBJECT]-(:Fact)-[:DERIVED_FROM]->(e:Episode)
    WHERE s.tenant_id = $tenant_id
    WITH e LIMIT $fetch
    RETURN 'graph' AS retriever, e, 0.5 AS score
  }
  WITH t, retriever, e, sum(score) AS score
  WHERE e.tenant_id = $tenant_id
    AND (e.retain_until IS NULL OR e.retain_until > t.now)
    AND e.ingested_at <= t.known_at
    AND e.occurred_at <= t.as_of
    AND ($session_id IS NULL OR e.session_id = $session_id)
    AND ($user_id IS NULL OR e.user_id = $user_id)
    AND (t.occurred_after IS NULL OR e.occurred_at >= t.occurred_after)
    AND (t.occurred_before IS NULL OR e.occurred_at < t.occurred_before)
  WITH t, retriever, e, score ORDER BY score DESC, e.occurred_at DESC
  WITH t, retriever, collect({e: e, score: score})[..$limit] AS top
  UNWIND range(0, size(top) - 1) AS i
  WITH t, top[i].e AS e, collect({retriever: retriever, rank: i + 1, score: top[i].score}) AS reasons
  WITH e, reasons, [(e)-[:NEXT]->(r:Episode)
                    WHERE e.content CONTAINS '?' AND coalesce(r.speaker, '') <> coalesce(e.speaker, '')
                      AND r.tenant_id = $tenant_id
                      AND (r.retain_until IS NULL OR r.retain_until > t.now)
                      AND r.ingested_at <= t.known_at
                      AND r.occurred_at <= t.as_of
                      AND ($session_id IS NULL OR r.session_id = $session_id)
                      AND ($user_id IS NULL OR r.user_id = $user_id)
                      AND (t.occurred_after IS NULL OR r.occurred_at >= t.occurred_after)
                      AND (t.occurred_before IS NULL OR r.occurred_at < t.occurred_before)
                    | {id: r.id, text: CASE WHEN r.speaker IS NULL THEN r.content ELSE r.speaker + ': ' + r.content END}
                   ][0] AS reply
  RETURN collect({reasons: reasons, id: e.id, reply: reply,
                  text: CASE WHEN e.speaker IS NULL THEN e.content ELSE e.speaker + ': ' + e.content END}) AS episode_hits
}
RETURN entity_hits, fact_hits, episode_hits
