// Multi-hop recall between two entities: up to $k shortest paths of 1..$max_hops facts (at most 4) from $from_id to
// $to_id (Neo4j 5 quantified path pattern with SHORTEST) over the facts' derived RELATED edges (see recall/around),
// walking only facts valid at $as_of as known at $known_at (never candidates, never past retention at $now),
// optionally only $predicates. With $k = 1 this is the shortest connection ("who can introduce us"). One row per
// path: target {id, kind, name}, length, confidence, latest and hops, each with its fact (statement, validity,
// confidence), provenance episode ids and `out` (the hop walks from the fact's subject). The same path shape as
// recall/around; temporal values as ISO-8601 strings.
MATCH (a:Entity {tenant_id: $tenant_id, id: $from_id})
MATCH (b:Entity {tenant_id: $tenant_id, id: $to_id})
MATCH p = SHORTEST 5 (a) ((x:Entity)-[l:RELATED]-(y:Entity)
      WHERE l.tenant_id = $tenant_id AND l.status <> 'candidate'
        AND ($predicates IS NULL OR l.predicate IN $predicates)
        AND l.valid_from <= $as_of AND (l.valid_to IS NULL OR l.valid_to > $as_of OR l.closed_at > $known_at
             OR (l.reclosed_at > $known_at AND l.prior_valid_to > $as_of))
        AND l.recorded_at <= $known_at AND (l.expired_at IS NULL OR l.expired_at > $known_at)
        AND (l.retain_until IS NULL OR l.retain_until > $now)){1,4} (b)
WHERE size(l) <= $max_hops
WITH b, l, x, y, size(l) AS length,
     reduce(c = 1.0, e IN l | CASE WHEN e.confidence < c THEN e.confidence ELSE c END) AS confidence,
     reduce(t = l[0].valid_from, e IN l | CASE WHEN e.valid_from > t THEN e.valid_from ELSE t END) AS latest
ORDER BY length, confidence DESC, latest DESC
LIMIT $k
CALL (l) {
  UNWIND range(0, size(l) - 1) AS i
  MATCH (f:Fact {id: l[i].fact_id})
  WHERE f.tenant_id = $tenant_id
  WITH i, f ORDER BY i
  RETURN collect(f {.id, .predicate, .statement, .confidence,
                    valid_from: toString(f.valid_from), valid_to: toString(f.valid_to),
                    episode_ids: [(f)-[:DERIVED_FROM]->(ep:Episode) WHERE ep.tenant_id = $tenant_id
                                  AND (ep.retain_until IS NULL OR ep.retain_until > $now) | ep.id]}) AS facts
}
RETURN b {.id, .kind, .name} AS target, length, confidence, toString(latest) AS latest,
       [i IN range(0, length - 1) | {fact: facts[i], episode_ids: facts[i].episode_ids,
                                     from_id: x[i].id, from_name: x[i].name, to_id: y[i].id, to_name: y[i].name,
                                     out: startNode(l[i]) = x[i]}] AS hops
