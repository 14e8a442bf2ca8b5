// Facts about an entity (as subject or object): valid at $as_of (valid time) as graphmem knew them at
// $known_at (transaction time). Facts past their retention (retain_until) are gone at once. With $include_superseded, every version known at $known_at.
// Paged: the id breaks ties so that consecutive pages neither repeat nor skip a fact.
MATCH (e:Entity {id: $entity_id})<-[:SUBJECT|OBJECT]-(f:Fact)
WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
  AND f.status <> 'candidate'
  AND (f.retain_until IS NULL OR f.retain_until > $now)
  AND ($predicates IS NULL OR f.predicate IN $predicates)
  AND f.recorded_at <= $known_at
  AND (f.expired_at IS NULL OR f.expired_at > $known_at)
  AND ($include_superseded OR (f.valid_from <= $as_of
       AND (f.valid_to IS NULL OR f.valid_to > $as_of OR f.closed_at > $known_at
             OR (f.reclosed_at > $known_at AND f.prior_valid_to > $as_of))))
MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.*, embedding: null, search_terms: null, subject_id: s.id, object_id: o.id} AS fact, s.name AS subject_name, o.name AS object_name
ORDER BY fact.predicate, fact.valid_from, fact.recorded_at, fact.id
SKIP $offset LIMIT $limit
