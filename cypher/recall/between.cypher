// Multi-hop recall between two entities: the $k best shortest paths (1..$max_hops facts, at most 4) from $from_id to
// $to_id over the facts' derived RELATED edges (see recall/around), walking only facts valid at $as_of as known at
// $known_at (never candidates, never past retention at $now), optionally only $predicates. Best = the strongest
// weakest hop (confidence desc), then the most recent valid_from, then the fact ids of the hops (so equal paths
// keep one order). With $k = 1 this is the shortest connection ("who can introduce us").
//
// A breadth-first walk from $from_id, one level per subquery as in recall/around, that stops at the first level
// reaching $to_id (every shortest path passes each entity at its first level, so earlier-reached entities are
// dropped). Each level keeps, per entity, the partial paths that fewer than $k other kept paths beat on both keys
// (weakest confidence and latest valid_from, which only fall and rise as a path grows): a path that $k others
// dominate at an entity stays dominated by their extensions after any further hop, so it can never be among the
// $k best, and the kept sets give exactly the $k best shortest paths. The walk's work grows with the edges within
// the distance, not with the number of shortest paths (`SHORTEST k` picked k of the equally short paths
// arbitrarily, and enumerating all of them is 10k per pair on a dense graph). At the last allowed level only
// edges to $to_id are kept.
//
// One row per path: target {id, kind, name}, length, confidence, latest and hops, each with its fact (statement,
// validity, confidence), provenance episode ids and `out` (the hop walks from the fact's subject). The same path
// shape as recall/around; temporal values as ISO-8601 strings; the times ($now, $as_of, $known_at) arrive as
// ISO-8601 strings, parsed once into `t`. No rows when the two are not connected within $max_hops.
// The edge filter is the same at every level (Cypher has no functions of our own to share it).
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at)} AS t
MATCH (a:Entity {tenant_id: $tenant_id, id: $from_id})
MATCH (b:Entity {tenant_id: $tenant_id, id: $to_id})
CALL (a, b, t) {
  MATCH (a)-[l:RELATED]-(y:Entity)
  WHERE y <> a AND ($max_hops > 1 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND ($predicates IS NULL OR l.predicate IN $predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, {ns: [a, y], ls: [l], ids: [l.fact_id], c: l.confidence, v: l.valid_from} AS q
  ORDER BY q.c DESC, q.v DESC, q.ids
  WITH y, collect(q) AS qs
  RETURN collect({n: y, ps: reduce(keep = [], q IN qs |
                                   CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)})
         AS l1
}
WITH a, b, t, l1, [e IN l1 WHERE e.n = b] AS hit, [e IN l1 | e.n] AS seen
CALL (a, b, t, l1, hit, seen) {
  WITH a, b, t, l1, seen WHERE size(hit) = 0 AND $max_hops >= 2
  UNWIND l1 AS e
  UNWIND e.ps AS p
  WITH a, b, t, seen, e.n AS x, p
  MATCH (x)-[l:RELATED]-(y:Entity)
  WHERE y <> a AND ($max_hops > 2 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND ($predicates IS NULL OR l.predicate IN $predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH seen, y, {ns: p.ns + y, ls: p.ls + l, ids: p.ids + l.fact_id,
                 c: CASE WHEN l.confidence < p.c THEN l.confidence ELSE p.c END,
                 v: CASE WHEN l.valid_from > p.v THEN l.valid_from ELSE p.v END} AS q
  ORDER BY q.c DESC, q.v DESC, q.ids
  WITH seen, y, collect(q) AS qs
  WHERE NOT y IN seen
  RETURN collect({n: y, ps: reduce(keep = [], q IN qs |
                                   CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)})
         AS l2
}
WITH a, b, t, l2, hit + [e IN l2 WHERE e.n = b] AS hit2, seen + [e IN l2 | e.n] AS seen2
CALL (a, b, t, hit2, l2, seen2) {
  WITH a, b, t, l2, seen2 WHERE size(hit2) = 0 AND $max_hops >= 3
  UNWIND l2 AS e
  UNWIND e.ps AS p
  WITH a, b, t, seen2, e.n AS x, p
  MATCH (x)-[l:RELATED]-(y:Entity)
  WHERE y <> a AND ($max_hops > 3 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND ($predicates IS NULL OR l.predicate IN $predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH seen2, y, {ns: p.ns + y, ls: p.ls + l, ids: p.ids + l.fact_id,
                  c: CASE WHEN l.confidence < p.c THEN l.confidence ELSE p.c END,
                  v: CASE WHEN l.valid_from > p.v THEN l.valid_from ELSE p.v END} AS q
  ORDER BY q.c DESC, q.v DESC, q.ids
  WITH seen2, y, collect(q) AS qs
  WHERE NOT y IN seen2
  RETURN collect({n: y, ps: reduce(keep = [], q IN qs |
                                   CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)})
         AS l3
}
WITH a, b, t, l3, hit2 + [e IN l3 WHERE e.n = b] AS hit3
CALL (a, b, t, hit3, l3) {
  WITH a, b, t, l3 WHERE size(hit3) = 0 AND $max_hops >= 4
  UNWIND l3 AS e
  UNWIND e.ps AS p
  WITH a, b, t, e.n AS x, p
  MATCH (x)-[l:RELATED]-(b)
  WHERE l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND ($predicates IS NULL OR l.predicate IN $predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  RETURN collect({n: b, ps: [{ns: p.ns + b, ls: p.ls + l, ids: p.ids + l.fact_id,
                              c: CASE WHEN l.confidence < p.c THEN l.confidence ELSE p.c END,
                              v: CASE WHEN l.valid_from > p.v THEN l.valid_from ELSE p.v END}]}) AS l4
}
UNWIND hit3 + l4 AS e
UNWIND e.ps AS best
WITH b, t, best
ORDER BY best.c DESC, best.v DESC, best.ids
LIMIT $k
CALL (best, t) {
  UNWIND range(0, size(best.ls) - 1) AS i
  MATCH (f:Fact {id: best.ids[i]})
  WHERE f.tenant_id = $tenant_id
  WITH i, f ORDER BY i
  RETURN collect(f {.id, .predicate, .statement, .confidence,
                    valid_from: toString(f.valid_from), valid_to: toString(f.valid_to),
                    episode_ids: [(f)-[:DERIVED_FROM]->(ep:Episode) WHERE ep.tenant_id = $tenant_id
                                  AND (ep.retain_until IS NULL OR ep.retain_until > t.now) | ep.id]}) AS facts
}
WITH b, best, facts, size(best.ls) AS length
ORDER BY best.c DESC, best.v DESC, best.ids
RETURN b {.id, .kind, .name} AS target, length, best.c AS confidence, toString(best.v) AS latest,
       [i IN range(0, length - 1) | {fact: facts[i], episode_ids: facts[i].episode_ids,
                                     from_id: best.ns[i].id, from_name: best.ns[i].name, to_id: best.ns[i + 1].id,
                                     to_name: best.ns[i + 1].name, out: startNode(best.ls[i]) = best.ns[i]}] AS hops
