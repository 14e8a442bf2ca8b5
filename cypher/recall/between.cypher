// Multi-hop recall between two entities: up to $k shortest paths of 1..$max_hops facts (at most 4) from $from_id to
// $to_id (Neo4j 5 quantified path pattern with SHORTEST), walking only facts valid at $as_of as known at $known_at
// (never candidates, never past retention at $now), optionally only $predicates. With $k = 1 this is the shortest
// connection ("who can introduce us"). One row per path: target {id, kind, name}, length, confidence, latest and
// hops, each with its fact (statement, validity, confidence), provenance episode ids and `out` (the hop walks
// from the fact's subject). The same path shape as recall/around; temporal values as ISO-8601 strings.
MATCH (a:Entity {tenant_id: $tenant_id, id: $from_id})
MATCH (b:Entity {tenant_id: $tenant_id, id: $to_id})
MATCH p = SHORTEST 5 (a) ((x:Entity)<-[xr:SUBJECT|OBJECT]-(f:Fact)-[:SUBJECT|OBJECT]->(y:Entity)
      WHERE f.tenant_id = $tenant_id AND x <> y AND f.status <> 'candidate'
        AND ($predicates IS NULL OR f.predicate IN $predicates)
        AND f.valid_from <= $as_of AND (f.valid_to IS NULL OR f.valid_to > $as_of)
        AND f.recorded_at <= $known_at AND (f.expired_at IS NULL OR f.expired_at > $known_at)
        AND (f.retain_until IS NULL OR f.retain_until > $now)){1,4} (b)
WHERE size(f) <= $max_hops
WITH b, f, x, y, xr, size(f) AS length,
     reduce(c = 1.0, ff IN f | CASE WHEN ff.confidence < c THEN ff.confidence ELSE c END) AS confidence,
     reduce(t = f[0].valid_from, ff IN f | CASE WHEN ff.valid_from > t THEN ff.valid_from ELSE t END) AS latest
ORDER BY length, confidence DESC, latest DESC
LIMIT $k
WITH b, x, y, xr, length, confidence, latest,
     [ff IN f | ff {.id, .predicate, .statement, .confidence,
                    valid_from: toString(ff.valid_from), valid_to: toString(ff.valid_to),
                    episode_ids: [(ff)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id
                                  AND (e.retain_until IS NULL OR e.retain_until > $now) | e.id]}] AS facts
RETURN b {.id, .kind, .name} AS target, length, confidence, toString(latest) AS latest,
       [i IN range(0, length - 1) | {fact: facts[i], episode_ids: facts[i].episode_ids,
                                     from_id: x[i].id, from_name: x[i].name, to_id: y[i].id, to_name: y[i].name,
                                     out: type(xr[i]) = 'SUBJECT'}] AS hops
