// Multi-hop recall between two entities: the $k best shortest paths (1..$max_hops facts, at most 4) from $from_id to
// $to_id over the facts' derived RELATED edges (see recall/around), walking only facts valid at $as_of as known at
// $known_at (never candidates, never past retention at $now), optionally only $opt.predicates. Best = the strongest
// weakest hop (confidence desc), then the most recent valid_from; the paths come in that order, then by the fact
// ids of their hops (so equal paths keep one order). With $k = 1 this is the shortest connection ("who can
// introduce us").
//
// Two breadth-first walks from $from_id, one level per step as in recall/around, up to the level that reaches
// $to_id (every shortest path passes each entity at its first level, so earlier-reached entities are dropped).
// 1. The levels (`s1`..`s4`): per entity first reached at level i, the edges to it from level i - 1 (`in`: the
//    position of the entity each comes from in its level, `ix`, and the edge), the $k strongest weakest hops of the
//    shortest paths to it (`cs`, strongest first) and the earliest latest valid_from of one (`lo`). Its work grows
//    with the edges within the distance (one row per edge, not per path); it alone reads and filters edges.
// 2. The paths, over those edges: per entity the partial paths that fewer than $k other kept paths beat on both
//    keys (weakest confidence and latest valid_from, which only fall and rise as a path grows): a path that $k
//    others dominate at an entity stays dominated by their extensions after any further hop, so it can never be
//    among the $k best. Walk 1 bounds this walk at $to_id: the $k best have a weakest hop of at least the k-th of
//    its `cs` (`theta`), so weaker edges are not walked; and every shortest path's weakest hop is at most its first
//    `cs` (`top`) and its latest valid_from at least its `lo`, so a partial path starts from those two, and paths
//    that differ only above `top` or below `lo`, which no path to $to_id can tell apart, count as equal. Without
//    the bounds, three fully joined layers of 100 people with random confidences kept ~30 partial paths per
//    entity, and the walk ran out of transaction memory.
// The answer is exact on both keys (its confidences and latest valid_froms are those of the $k best shortest
// paths). When more paths than fit tie on both, which of them are returned is fixed by the walk (the same graph
// gives the same paths), not necessarily those with the lowest fact ids: a tie-break by ids that pruning respects
// needs partial paths kept on three keys, several times the work on a dense graph.
// Each step of walk 2 sorts one entity's candidates in a subquery of its own (`CALL (cands)`): a sort's rows carry
// its subquery's imported variables, and those are all of the level's edges and paths in the enclosing one.
// Memory: Neo4j counts every list a sorted or grouped row carries once per row. So walk 1 groups each level by the
// entity reached alone and drops those seen at an earlier level outside the subquery (grouping by the list of seen
// entities too made its memory level x seen: from someone who knows 3,000 people, a 4-hop walk needed more than
// the 716 MiB a 1g heap allows a transaction), and the final top-$k sort reads rows out of an aggregation, not rows
// carrying every level and kept list (142-210 MB for 5 rows). Around such a hub (3,000 and 8,000 people, their
// organisation, its other 3,000 / 8,000 staff and a friend each) a 4-hop walk now takes 65-80 MB; on the bench graph
// the same answers on 300 calls (max_hops 2-4, k 1 or 5) and Neo4j CPU 1.43 against 1.57 ms per call (medians of
// eight interleaved rounds). Walk 2 still sorts within a subquery, whose rows carry the levels: ~15 KB per
// candidate path of one entity there (46 MB for an organisation reached from 3,000 people).
//
// One row per path: target {id, kind, name}, length, confidence, latest and hops, each with its fact (null when the
// read saw the hop's RELATED edge but not its Fact: one being committed or erased meanwhile, as Neo4j reads are
// read-committed; graphmem.recall.paths leaves such a path out) (statement,
// validity as believed at $known_at, confidence), provenance episode ids (recorded by $known_at as asserting or confirming it) and `out` (the hop walks from the fact's subject). The same path
// shape as recall/around; temporal values as ISO-8601 strings; the times ($now, $as_of, $known_at) arrive as
// ISO-8601 strings, parsed once into `t`. No rows when the two are not connected within $max_hops.
// The edge filter is the same at every level of walk 1 (Cypher has no functions of our own to share it), as are
// the top-$k insertion of `cs` and each step of walk 2. The entity at an edge's far end has no label in the pattern
// (RELATED joins entities only): with `(y:Entity)` the planner may scan every entity and expand into the known one
// to group by `y` in label order.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      predicates: $opt.predicates} AS t
MATCH (a:Entity {tenant_id: $tenant_id, id: $from_id})
MATCH (b:Entity {tenant_id: $tenant_id, id: $to_id})
CALL (a, b, t) {
  MATCH (a)-[l:RELATED]-(y)
  WHERE y <> a AND ($max_hops > 1 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, collect({ix: 0, l: l}) AS ins, collect(l.confidence) AS cands, min(l.valid_from) AS lo
  RETURN collect({n: y, in: ins, lo: lo, cs: reduce(top = [], c IN cands |
                   CASE WHEN size(top) < $k OR c > top[-1]
                        THEN ([x IN top WHERE x >= c] + c + [x IN top WHERE x < c])[..$k] ELSE top END)}) AS s1
}
WITH a, b, t, s1, [e IN s1 | e.n] AS seen
CALL (a, b, t, s1, seen) {
  WITH a, b, t, s1, seen WHERE NOT b IN seen AND $max_hops >= 2
  UNWIND range(0, size(s1) - 1) AS ix
  WITH a, b, t, seen, ix, s1[ix] AS e
  WITH a, b, t, seen, ix, e, e.n AS x
  MATCH (x)-[l:RELATED]-(y)
  WHERE y <> a AND ($max_hops > 2 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, collect({ix: ix, l: l}) AS ins,
       collect([c IN e.cs | CASE WHEN l.confidence < c THEN l.confidence ELSE c END]) AS css,
       min(CASE WHEN l.valid_from > e.lo THEN l.valid_from ELSE e.lo END) AS lo
  RETURN collect({n: y, in: ins, lo: lo, cs: reduce(top = [], c IN reduce(f = [], cs IN css | f + cs) |
                   CASE WHEN size(top) < $k OR c > top[-1]
                        THEN ([x IN top WHERE x >= c] + c + [x IN top WHERE x < c])[..$k] ELSE top END)}) AS s2
}
WITH a, b, t, s1, [e IN s2 WHERE NOT e.n IN seen] AS s2, seen
WITH a, b, t, s1, s2, seen + [e IN s2 | e.n] AS seen
CALL (a, b, t, s2, seen) {
  WITH a, b, t, s2, seen WHERE NOT b IN seen AND $max_hops >= 3
  UNWIND range(0, size(s2) - 1) AS ix
  WITH a, b, t, seen, ix, s2[ix] AS e
  WITH a, b, t, seen, ix, e, e.n AS x
  MATCH (x)-[l:RELATED]-(y)
  WHERE y <> a AND ($max_hops > 3 OR y = b) AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, collect({ix: ix, l: l}) AS ins,
       collect([c IN e.cs | CASE WHEN l.confidence < c THEN l.confidence ELSE c END]) AS css,
       min(CASE WHEN l.valid_from > e.lo THEN l.valid_from ELSE e.lo END) AS lo
  RETURN collect({n: y, in: ins, lo: lo, cs: reduce(top = [], c IN reduce(f = [], cs IN css | f + cs) |
                   CASE WHEN size(top) < $k OR c > top[-1]
                        THEN ([x IN top WHERE x >= c] + c + [x IN top WHERE x < c])[..$k] ELSE top END)}) AS s3
}
WITH a, b, t, s1, s2, [e IN s3 WHERE NOT e.n IN seen] AS s3, seen
WITH a, b, t, s1, s2, s3, seen + [e IN s3 | e.n] AS seen
CALL (a, b, t, s3, seen) {
  WITH a, b, t, s3, seen WHERE NOT b IN seen AND $max_hops >= 4
  UNWIND range(0, size(s3) - 1) AS ix
  WITH b, t, ix, s3[ix] AS e
  WITH b, t, ix, e, e.n AS x
  MATCH (x)-[l:RELATED]-(b)
  WHERE l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH b, collect({ix: ix, l: l}) AS ins,
       collect([c IN e.cs | CASE WHEN l.confidence < c THEN l.confidence ELSE c END]) AS css,
       min(CASE WHEN l.valid_from > e.lo THEN l.valid_from ELSE e.lo END) AS lo
  RETURN collect({n: b, in: ins, lo: lo, cs: reduce(top = [], c IN reduce(f = [], cs IN css | f + cs) |
                   CASE WHEN size(top) < $k OR c > top[-1]
                        THEN ([x IN top WHERE x >= c] + c + [x IN top WHERE x < c])[..$k] ELSE top END)}) AS s4
}
// `d`: the position of the level reaching $to_id (its distance - 1); `end`: $to_id's entry there, with the bounds.
// Walk 2 takes the levels before it, and of that level only $to_id.
WITH a, b, t, [s IN [s1, s2, s3, s4] | [e IN s WHERE e.n = b]] AS hits, [s1, s2, s3, s4] AS levels
WITH a, b, t, levels, [i IN range(0, 3) WHERE size(hits[i]) > 0] AS reached, hits
WHERE size(reached) > 0
WITH a, b, t, reached[0] AS d, hits[reached[0]][0] AS end, levels
WITH a, b, t, d, end.cs[0] AS top, end.cs[-1] AS theta, end.lo AS lo,
     [i IN range(0, d) | CASE WHEN i = d THEN [end] ELSE levels[i] END] AS levels
// Walk 2, one level at a time: `kept<i+1>` lists, in the order of `level<i>`'s entities, each one's kept partial
// paths (`kept0`: the path of no hops at $from_id), from the paths of the level before and the edges in `in`.
WITH a, b, t, d, theta, levels[0] AS level0, levels[1] AS level1, levels[2] AS level2, levels[3] AS level3,
     [[{ns: [a], ls: [], ids: [], c: top, v: lo}]] AS kept0
CALL (d, theta, kept0, level0) {
  WITH d, theta, kept0, level0 AS level WHERE d >= 0
  UNWIND level AS e
  WITH reduce(f = [], qs IN [x IN e.in WHERE x.l.confidence >= theta | [p IN kept0[x.ix] |
                {ns: p.ns + e.n, ls: p.ls + x.l, ids: p.ids + x.l.fact_id,
                 c: CASE WHEN x.l.confidence < p.c THEN x.l.confidence ELSE p.c END,
                 v: CASE WHEN x.l.valid_from > p.v THEN x.l.valid_from ELSE p.v END}]] | f + qs) AS cands
  CALL (cands) {
    UNWIND cands AS q
    WITH q ORDER BY q.c DESC, q.v DESC, q.ids
    WITH collect(q) AS qs
    RETURN reduce(keep = [], q IN qs | CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)
           AS ps
  }
  RETURN collect(ps) AS kept1
}
CALL (d, theta, kept1, level1) {
  WITH d, theta, kept1, level1 AS level WHERE d >= 1
  UNWIND level AS e
  WITH reduce(f = [], qs IN [x IN e.in WHERE x.l.confidence >= theta | [p IN kept1[x.ix] |
                {ns: p.ns + e.n, ls: p.ls + x.l, ids: p.ids + x.l.fact_id,
                 c: CASE WHEN x.l.confidence < p.c THEN x.l.confidence ELSE p.c END,
                 v: CASE WHEN x.l.valid_from > p.v THEN x.l.valid_from ELSE p.v END}]] | f + qs) AS cands
  CALL (cands) {
    UNWIND cands AS q
    WITH q ORDER BY q.c DESC, q.v DESC, q.ids
    WITH collect(q) AS qs
    RETURN reduce(keep = [], q IN qs | CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)
           AS ps
  }
  RETURN collect(ps) AS kept2
}
CALL (d, theta, kept2, level2) {
  WITH d, theta, kept2, level2 AS level WHERE d >= 2
  UNWIND level AS e
  WITH reduce(f = [], qs IN [x IN e.in WHERE x.l.confidence >= theta | [p IN kept2[x.ix] |
                {ns: p.ns + e.n, ls: p.ls + x.l, ids: p.ids + x.l.fact_id,
                 c: CASE WHEN x.l.confidence < p.c THEN x.l.confidence ELSE p.c END,
                 v: CASE WHEN x.l.valid_from > p.v THEN x.l.valid_from ELSE p.v END}]] | f + qs) AS cands
  CALL (cands) {
    UNWIND cands AS q
    WITH q ORDER BY q.c DESC, q.v DESC, q.ids
    WITH collect(q) AS qs
    RETURN reduce(keep = [], q IN qs | CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)
           AS ps
  }
  RETURN collect(ps) AS kept3
}
CALL (d, theta, kept3, level3) {
  WITH d, theta, kept3, level3 AS level WHERE d >= 3
  UNWIND level AS e
  WITH reduce(f = [], qs IN [x IN e.in WHERE x.l.confidence >= theta | [p IN kept3[x.ix] |
                {ns: p.ns + e.n, ls: p.ls + x.l, ids: p.ids + x.l.fact_id,
                 c: CASE WHEN x.l.confidence < p.c THEN x.l.confidence ELSE p.c END,
                 v: CASE WHEN x.l.valid_from > p.v THEN x.l.valid_from ELSE p.v END}]] | f + qs) AS cands
  CALL (cands) {
    UNWIND cands AS q
    WITH q ORDER BY q.c DESC, q.v DESC, q.ids
    WITH collect(q) AS qs
    RETURN reduce(keep = [], q IN qs | CASE WHEN size([x IN keep WHERE x.v >= q.v]) < $k THEN keep + q ELSE keep END)
           AS ps
  }
  RETURN collect(ps) AS kept4
}
WITH b, t, [kept1, kept2, kept3, kept4][d][0] AS bests
WITH b, t, collect(bests)[0] AS bests
UNWIND bests AS best
WITH b, t, best
ORDER BY best.c DESC, best.v DESC, best.ids
LIMIT $k
CALL (best, t) {
  UNWIND range(0, size(best.ls) - 1) AS i
  OPTIONAL MATCH (f:Fact {id: best.ids[i]})
  WHERE f.tenant_id = $tenant_id
  WITH i, f ORDER BY i
  RETURN collect({fact: f {.id, .predicate, .statement, .confidence,
                    valid_from: toString(f.valid_from),
                    valid_to: toString(CASE WHEN f.closed_at IS NULL OR f.closed_at > t.known_at THEN null
                                            WHEN f.reclosed_at > t.known_at THEN f.prior_valid_to
                                            ELSE f.valid_to END),
                    episode_ids: [(f)-[d:DERIVED_FROM]->(ep:Episode) WHERE ep.tenant_id = $tenant_id
                                  AND (ep.retain_until IS NULL OR ep.retain_until > t.now)
                                  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: ep.session_id}) WHERE ss.retain_until <= t.now }
                                  AND d.recorded_at <= t.known_at
                                  AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] | ep.id]}})
         AS facts
}
WITH b, best, facts, size(best.ls) AS length
ORDER BY best.c DESC, best.v DESC, best.ids
RETURN b {.id, .kind, .name} AS target, length, best.c AS confidence, toString(best.v) AS latest,
       [i IN range(0, length - 1) | {fact: facts[i].fact, episode_ids: facts[i].fact.episode_ids,
                                     from_id: best.ns[i].id, from_name: best.ns[i].name, to_id: best.ns[i + 1].id,
                                     to_name: best.ns[i + 1].name, to_kind: best.ns[i + 1].kind,
                                     out: startNode(best.ls[i]) = best.ns[i]}] AS hops
