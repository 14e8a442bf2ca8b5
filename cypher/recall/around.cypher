// Multi-hop recall around one entity: for every entity reachable in 1..$max_hops facts (at most 3), the best of its
// shortest paths (the strongest weakest hop, then the most recent), over the facts' derived
// (subject)-[:RELATED]->(object) edges, walked in either direction (the edge copies the fact's id and the
// properties filtered here, see facts/create_batch), walking only facts valid at $as_of as known at $known_at
// (never candidates, never past retention at $now), optionally only $opt.predicates. Ranked by length, then weakest
// confidence (desc), then most recent valid_from (desc), then target id (so equal paths keep one order); $limit paths.
//
// The walk is breadth-first, one level per subquery: level k holds the entities first reached in k hops, each with
// the partial paths to it that no other partial path beats on both keys (a Pareto set: a higher weakest confidence
// and a later latest valid_from; in practice one path). A path's keys only fall (min of confidences) or rise (max of
// valid_froms) as it grows, so a path dominated at an entity stays dominated after any further hop: the sets stay
// exact, and the first of a target's set is its best shortest path. Work grows with the edges within $max_hops
// (each level expands its entities' edges once per kept path), not with the number of shortest paths: on a dense
// graph (100 entities per level, fully joined) the `ALL SHORTEST` form enumerated 10k paths per target and ran out
// of the transaction memory pool. An edge to an entity reached at an earlier level is dropped before its
// properties are read (a list check per edge: on the bench graph most third-level edges lead back, and reading
// their validity first cost 19% more db hits and ~9% more Neo4j CPU per call, same answers on 300 calls). The far
// end of a RELATED edge is not label-checked: only facts/create_batch (and the meta backfill) create the edge,
// always between two Entity nodes. The last level keeps only each entity's best path (the first in rank order):
// its Pareto set would only matter for a further hop (same answers on 600 calls, ~5% less Neo4j CPU per call).
//
// One row: `facts` (each distinct hop fact once, with provenance episode_ids: those recorded by $known_at as
// asserting or confirming it, not a retraction's or correction's; paths
// share most of their facts; its
// valid_to as believed at $known_at, as `Fact.as_known_at` shows it: an end learned later is not shown)
// and `paths` (target {id, kind, name}, length, confidence, latest, hops as fact ids with from/to entities and
// `out`: the hop walks from the fact's subject, i.e. along its RELATED edge).
// The answer carries what a path needs and no more (graphmem.recall.paths); full records are one GET away.
// Empty lists when $entity_id is not an entity of this tenant (the caller tells that from "no paths"). A hop fact
// the read did not find (its RELATED edge seen, its Fact not: one being committed or erased meanwhile, as Neo4j
// reads are read-committed) is missing from `facts`; graphmem.recall.paths leaves its path out.
// Temporal values come back as ISO-8601 strings (toString): the Python driver hydrates a DateTime in ~50-100 µs,
// pydantic parses the string in ~1 µs. The times ($now, $as_of, $known_at) arrive as ISO-8601 strings, parsed
// once into the map `t` (the driver packs a datetime in ~40 µs).
// The edge filter is the same at every level (Cypher has no functions of our own to share it).
// The final ranking's rows come out of an aggregation by target (each target is on one level, so it groups one
// row): a sort's rows carry every variable of the rows it reads, and after the UNWIND those were the three level
// lists, so Neo4j counted them once per kept row: around a hub (an organisation of 2,000 people, limit 500) the
// top-$limit sort held 700+ MB and the call failed with the transaction memory limit; now ~1 MB (same answers on
// 300 bench calls, Neo4j CPU per call no higher).
// Provenance: each hop fact's DERIVED_FROM episodes (edge filters: recorded by $known_at, asserting or confirming)
// are listed once, and the episode checks (this tenant, not past retention at $now, nor in a session past its TTL:
// a Session index seek) run once per distinct episode of all those facts, not per (fact, episode) pair; a fact keeps
// the ids of its episodes that passed, in its edges' order. Paths share episodes (the bench: 50 hop facts from 20
// episodes per call): 3,809 PROFILE db hits per call against 3,932 when checked per pair (bench/recall data, 60
// calls on 50 tenants, max_hops 3, limit 50); same answer.
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at),
      predicates: $opt.predicates} AS t
MATCH (a:Entity {tenant_id: $tenant_id, id: $entity_id})
CALL (a, t) {
  MATCH (a)-[l:RELATED]-(y)
  WHERE y <> a AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, {ns: [a, y], ls: [l], c: l.confidence, v: l.valid_from} AS q
  ORDER BY q.c DESC, q.v DESC
  WITH y, collect(q) AS qs
  RETURN collect({n: y, ps: reduce(keep = [], q IN qs |
                                   CASE WHEN size(keep) = 0 OR q.v > keep[-1].v THEN keep + q ELSE keep END)}) AS l1
}
CALL (a, t, l1) {
  WITH a, t, l1, [e IN l1 | e.n] AS s1 WHERE $max_hops >= 2
  UNWIND l1 AS e
  UNWIND e.ps AS p
  WITH a, t, s1, e.n AS x, p
  MATCH (x)-[l:RELATED]-(y)
  WHERE y <> a AND NOT y IN s1 AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, {ns: p.ns + y, ls: p.ls + l, c: CASE WHEN l.confidence < p.c THEN l.confidence ELSE p.c END,
           v: CASE WHEN l.valid_from > p.v THEN l.valid_from ELSE p.v END} AS q
  ORDER BY q.c DESC, q.v DESC
  WITH y, collect(q) AS qs
  RETURN collect({n: y, ps: reduce(keep = [], q IN qs |
                                   CASE WHEN size(keep) = 0 OR q.v > keep[-1].v THEN keep + q ELSE keep END)}) AS c2
}
WITH a, t, l1, c2 AS l2, [e IN l1 + c2 | e.n] AS seen
CALL (a, t, l2, seen) {
  WITH a, t, l2, seen WHERE $max_hops >= 3
  UNWIND l2 AS e
  UNWIND e.ps AS p
  WITH a, t, seen, e.n AS x, p
  MATCH (x)-[l:RELATED]-(y)
  WHERE y <> a AND NOT y IN seen AND l.tenant_id = $tenant_id AND l.status <> 'candidate'
    AND (t.predicates IS NULL OR l.predicate IN t.predicates)
    AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
         OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
    AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
    AND (l.retain_until IS NULL OR l.retain_until > t.now)
  WITH y, {ns: p.ns + y, ls: p.ls + l, c: CASE WHEN l.confidence < p.c THEN l.confidence ELSE p.c END,
           v: CASE WHEN l.valid_from > p.v THEN l.valid_from ELSE p.v END} AS q
  ORDER BY q.c DESC, q.v DESC
  WITH y, collect(q)[0] AS best
  RETURN collect({n: y, ps: [best]}) AS c3
}
UNWIND l1 + l2 + c3 AS r
WITH r.n AS b, collect(r.ps[0])[0] AS best
WITH b, best, size(best.ls) AS length
ORDER BY length, best.c DESC, best.v DESC, b.id
LIMIT $limit
WITH collect({
       target: b {.id, .kind, .name}, length: length, confidence: best.c, latest: toString(best.v),
       hops: [i IN range(0, length - 1) | {fact_id: best.ls[i].fact_id, from_id: best.ns[i].id,
                                           from_name: best.ns[i].name, to_id: best.ns[i + 1].id,
                                           to_name: best.ns[i + 1].name, to_kind: best.ns[i + 1].kind,
                                           out: startNode(best.ls[i]) = best.ns[i]}]}) AS paths
CALL (paths) {
  WITH paths, {now: datetime($now), known_at: datetime($known_at)} AS t
  UNWIND paths AS p
  UNWIND p.hops AS h
  WITH DISTINCT t, h.fact_id AS fid
  MATCH (f:Fact {id: fid})
  WHERE f.tenant_id = $tenant_id
  WITH collect(f {.id, .predicate, .statement, .confidence,
                  valid_from: toString(f.valid_from),
                  valid_to: toString(CASE WHEN f.closed_at IS NULL OR f.closed_at > t.known_at THEN null
                                          WHEN f.reclosed_at > t.known_at THEN f.prior_valid_to
                                          ELSE f.valid_to END),
                  episodes: [(f)-[d:DERIVED_FROM]->(e:Episode) WHERE d.recorded_at <= t.known_at
                             AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] | e]}) AS rows
  CALL (rows) {
    UNWIND rows AS r
    UNWIND r.episodes AS e
    WITH DISTINCT e
    WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > datetime($now))
      AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id})
                       WHERE ss.retain_until <= datetime($now) }
    RETURN collect(e) AS kept
  }
  RETURN [r IN rows | r {.id, .predicate, .statement, .confidence, .valid_from, .valid_to,
                         episode_ids: [e IN r.episodes WHERE e IN kept | e.id]}] AS facts
}
RETURN facts, paths
