// Neighbours of an entity one fact away: facts with the entity as subject ($direction 'out'), as object ('in')
// or either ('both'), valid at $as_of as known at $known_at (with $include_superseded: every version known then),
// never candidates or past retention ($now), optionally only $opt.predicates. Literal-valued facts have no neighbour
// entity (neighbour null). Provenance: the episodes recorded by $known_at as asserting or confirming each fact (not
// one that retracted or corrected it). Paginated
// ($offset, $limit), ordered by predicate, then oldest valid_from first, recorded_at and id (as facts/about_entity).
MATCH (a:Entity {tenant_id: $tenant_id, id: $entity_id})<-[r:SUBJECT|OBJECT]-(f:Fact)
WHERE f.tenant_id = $tenant_id AND f.status <> 'candidate'
  AND ($direction = 'both' OR ($direction = 'out' AND type(r) = 'SUBJECT') OR ($direction = 'in' AND type(r) = 'OBJECT'))
  AND ($opt.predicates IS NULL OR f.predicate IN $opt.predicates)
  AND (f.retain_until IS NULL OR f.retain_until > $now)
  AND f.recorded_at <= $known_at AND (f.expired_at IS NULL OR f.expired_at > $known_at)
  AND ($include_superseded OR (f.valid_from <= $as_of
       AND (f.valid_to IS NULL OR f.valid_to > $as_of OR f.closed_at > $known_at
             OR (f.reclosed_at > $known_at AND f.prior_valid_to > $as_of))))
OPTIONAL MATCH (f)-[:SUBJECT|OBJECT]->(n:Entity) WHERE n <> a
MATCH (f)-[:SUBJECT]->(s:Entity)
WITH a, f, r, n, s
ORDER BY f.predicate, f.valid_from, f.recorded_at, f.id
SKIP $offset LIMIT $limit
RETURN f {.*, embedding: null, search_terms: null, subject_id: s.id,
          object_id: CASE WHEN type(r) = 'SUBJECT' THEN n.id ELSE a.id END} AS fact,
       CASE WHEN type(r) = 'SUBJECT' THEN 'out' ELSE 'in' END AS direction,
       n {.*, embedding: null, search_terms: null, search_text: null} AS neighbour,
       [(f)-[d:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now)
         AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now } AND d.recorded_at <= $known_at
         AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] | e.id] AS episode_ids
