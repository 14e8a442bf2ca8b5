// Multi-hop recall around one entity: for every entity reachable in 1..$max_hops facts (at most 3), one shortest
// path Entity<-[:SUBJECT|OBJECT]-Fact-[:SUBJECT|OBJECT]->Entity ... (Neo4j 5 quantified path pattern), walking
// only facts valid at $as_of as known at $known_at (never candidates, never past retention at $now), optionally
// only $predicates. Each hop returns its fact (statement, validity, confidence) and provenance episode ids.
// Ranked by length, then weakest confidence (desc), then most recent valid_from (desc); $limit paths.
// One row: `facts` (each distinct hop fact once, with provenance episode_ids; paths share most of their facts)
// and `paths` (target {id, kind, name}, length, confidence, latest, hops as fact ids with from/to entities and
// `out`: the hop walks from the fact's subject, read from the type of the edge it left `x` by, so no extra read).
// The answer carries what a path needs and no more (graphmem.recall.paths); full records are one GET away.
// Empty lists when $entity_id is not an entity of this tenant (the caller tells that from "no paths").
// Temporal values come back as ISO-8601 strings (toString): the Python driver hydrates a DateTime in ~50-100 µs,
// pydantic parses the string in ~1 µs. The times ($now, $as_of, $known_at) arrive as ISO-8601 strings, parsed
// once into the map `t` (the driver packs a datetime in ~40 µs).
WITH {now: datetime($now), as_of: datetime($as_of), known_at: datetime($known_at)} AS t
MATCH (a:Entity {tenant_id: $tenant_id, id: $entity_id})
MATCH p = ANY SHORTEST (a) ((x:Entity)<-[xr:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(y:Entity)
      WHERE f.tenant_id = $tenant_id AND x <> y AND f.status <> 'candidate'
        AND ($predicates IS NULL OR f.predicate IN $predicates)
        AND f.valid_from <= t.as_of AND (f.valid_to IS NULL OR f.valid_to > t.as_of)
        AND f.recorded_at <= t.known_at AND (f.expired_at IS NULL OR f.expired_at > t.known_at)
        AND (f.retain_until IS NULL OR f.retain_until > t.now)){1,3} (b:Entity)
WHERE b <> a AND size(f) <= $max_hops
WITH b, f, x, y, xr, size(f) AS length,
     reduce(c = 1.0, ff IN f | CASE WHEN ff.confidence < c THEN ff.confidence ELSE c END) AS confidence,
     reduce(v = f[0].valid_from, ff IN f | CASE WHEN ff.valid_from > v THEN ff.valid_from ELSE v END) AS latest
ORDER BY length, confidence DESC, latest DESC
LIMIT $limit
WITH collect({
       target: b {.id, .kind, .name}, length: length, confidence: confidence, latest: toString(latest), f: f,
       hops: [i IN range(0, length - 1) | {fact_id: f[i].id, from_id: x[i].id, from_name: x[i].name,
                                           to_id: y[i].id, to_name: y[i].name, out: type(xr[i]) = 'SUBJECT'}]}) AS paths
CALL (paths) {
  WITH paths, datetime($now) AS now
  UNWIND paths AS p
  UNWIND p.f AS ff
  WITH DISTINCT now, ff
  RETURN collect(ff {.id, .predicate, .statement, .confidence,
                     valid_from: toString(ff.valid_from), valid_to: toString(ff.valid_to),
                     episode_ids: [(ff)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id
                                   AND (e.retain_until IS NULL OR e.retain_until > now) | e.id]}) AS facts
}
RETURN facts, [p IN paths | p {.target, .length, .confidence, .latest, .hops}] AS paths
