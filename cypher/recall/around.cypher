// Multi-hop recall around one entity: for every entity reachable in 1..$max_hops facts (at most 3), the best of its
// shortest paths (ALL SHORTEST, then the strongest weakest hop, then the most recent; ANY SHORTEST picked one
// arbitrarily, so a target reached over a 0.3 and a 1.0 link showed 0.3) over the facts' derived
// (subject)-[:RELATED]->(object) edges (Neo4j 5 quantified path pattern, either
// direction; the edge copies the fact's id and the properties filtered here, see facts/create_batch), walking only
// facts valid at $as_of as known at $known_at (never candidates, never past retention at $now), optionally only
// $predicates. One relationship per hop instead of Fact node plus SUBJECT and OBJECT edges: ~15% less Neo4j CPU
// per 3-hop call (bench/recall.py graph). Each hop returns its fact (statement, validity, confidence) and
// provenance episode ids. Ranked by length, then weakest confidence (desc), then most recent valid_from (desc);
// $limit paths.
// One row: `facts` (each distinct hop fact once, with provenance episode_ids; paths share most of their facts)
// and `paths` (target {id, kind, name}, length, confidence, latest, hops as fact ids with from/to entities and
// `out`: the hop walks from the fact's subject, i.e. along its RELATED edge).
// The answer carries what a path needs and no more (graphmem.recall.paths); full records are one GET away.
// Empty lists when $entity_id is not an entity of this tenant (the caller tells that from "no paths").
// Temporal values come back as ISO-8601 strings (toString): the Python driver hydrates a DateTime in ~50-100 µs,
// pydantic parses the string in ~1 µs. The times ($now, $as_of, $known_at) arrive as ISO-8601 strings, parsed
// once into the map `t` (the driver packs a datetime in ~40 µs).
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at)} AS t
MATCH (a:Entity {tenant_id: $tenant_id, id: $entity_id})
MATCH p = ALL SHORTEST (a) ((x:Entity)-[l:RELATED]-(y:Entity)
      WHERE l.tenant_id = $tenant_id AND l.status <> 'candidate'
        AND ($predicates IS NULL OR l.predicate IN $predicates)
        AND l.valid_from <= t.as_of AND (l.valid_to IS NULL OR l.valid_to > t.as_of OR l.closed_at > t.known_at
             OR (l.reclosed_at > t.known_at AND l.prior_valid_to > t.as_of))
        AND l.recorded_at <= t.known_at AND (l.expired_at IS NULL OR l.expired_at > t.known_at)
        AND (l.retain_until IS NULL OR l.retain_until > t.now)){1,3} (b:Entity)
WHERE b <> a AND size(l) <= $max_hops
WITH b, l, x, y, size(l) AS length,
     reduce(c = 1.0, e IN l | CASE WHEN e.confidence < c THEN e.confidence ELSE c END) AS confidence,
     reduce(v = l[0].valid_from, e IN l | CASE WHEN e.valid_from > v THEN e.valid_from ELSE v END) AS latest
ORDER BY confidence DESC, latest DESC
WITH b, head(collect({l: l, x: x, y: y, length: length, confidence: confidence, latest: latest})) AS best
WITH b, best.l AS l, best.x AS x, best.y AS y, best.length AS length, best.confidence AS confidence,
     best.latest AS latest
ORDER BY length, confidence DESC, latest DESC
LIMIT $limit
WITH collect({
       target: b {.id, .kind, .name}, length: length, confidence: confidence, latest: toString(latest),
       hops: [i IN range(0, length - 1) | {fact_id: l[i].fact_id, from_id: x[i].id, from_name: x[i].name,
                                           to_id: y[i].id, to_name: y[i].name, out: startNode(l[i]) = x[i]}]}) AS paths
CALL (paths) {
  WITH paths, datetime($now) AS now
  UNWIND paths AS p
  UNWIND p.hops AS h
  WITH DISTINCT now, h.fact_id AS fid
  MATCH (f:Fact {id: fid})
  WHERE f.tenant_id = $tenant_id
  RETURN collect(f {.id, .predicate, .statement, .confidence,
                    valid_from: toString(f.valid_from), valid_to: toString(f.valid_to),
                    episode_ids: [(f)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id
                                  AND (e.retain_until IS NULL OR e.retain_until > now) | e.id]}) AS facts
}
RETURN facts, paths
