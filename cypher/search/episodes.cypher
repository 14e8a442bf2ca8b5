// Hybrid episode retrieval, phase one (rank; search/hydrate reads the winners): full-text (episode_text, Lucene BM25), vector (episode_embedding, cosine) and graph
// proximity (episodes that mention a seed entity, and the provenance episodes of the seeds' facts).
// Full-text requires the tenant's token inside Lucene; vector similarity is exact over the tenant's episodes.
// Candidates ($fetch per retriever) are filtered by tenant, retention ($now), transaction time
// ($known_at vs ingested_at), valid time ($as_of: nothing that had not happened yet) and scope filters apply
// BEFORE each retriever keeps its top $limit. Returns one row: hits, a list of {reasons [{retriever, rank, score}],
// id, text (speaker-prefixed content, for MMR), reply}. `reply` ({id, text} or null) answers a hit that asks
// something (its content has a '?'): the next episode of its session (NEXT) by another speaker, if it passes the
// same filters.
// Times ($now, $as_of, $known_at, $occurred_after, $occurred_before) arrive as ISO-8601 strings (or null) and are
// parsed once, into the map `t`: the Python driver spends ~40 µs packing each datetime parameter.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      occurred_after: datetime($occurred_after), occurred_before: datetime($occurred_before)} AS t
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
                text: CASE WHEN e.speaker IS NULL THEN e.content ELSE e.speaker + ': ' + e.content END}) AS hits
