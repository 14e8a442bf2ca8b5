// The timeline that fact $id belongs to: every version of the same subject and predicate (and, for a
// multi-valued predicate, the same object), corrected ones included, oldest valid_from first. With $symmetric (a
// predicate that holds both ways, KNOWS) the versions of the pair stored the other way round belong to it too:
// "Frank knows Dana" from 2019 is the history of "Dana knows Frank" from 2022 (graphmem.store.facts stores an
// earlier start stated from either end as the pair's history, linked by SUPERSEDES).
// Paged here ($offset, $limit; oldest valid_from, then recorded_at, then id): only the page's versions are projected
// and have their ends and SUPERSEDES edges read (a timeline of 10,000 versions, all projected and sliced in Python,
// took 3.2 s a page).
MATCH (f:Fact {id: $id})-[:SUBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH (f)-[:OBJECT]->(fo:Entity)
CALL (f, s, fo) {
  MATCH (s)<-[:SUBJECT]-(h:Fact {predicate: f.predicate})
  WHERE $single_valued OR h.object_key = f.object_key
  RETURN h
  UNION
  WITH f, s, fo WHERE $symmetric AND fo IS NOT NULL
  MATCH (fo)<-[:SUBJECT]-(h:Fact {predicate: f.predicate})-[:OBJECT]->(s)
  RETURN h
}
WITH h
WHERE h.tenant_id = $tenant_id AND h.status <> 'candidate'
  AND (h.retain_until IS NULL OR h.retain_until > $now)
WITH h
ORDER BY h.valid_from, h.recorded_at, h.id
SKIP $offset LIMIT $limit
MATCH (h)-[:SUBJECT]->(hs:Entity)
OPTIONAL MATCH (h)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (h)-[:SUPERSEDES]->(older:Fact)
WITH h, hs, o, collect(older.id) AS supersedes
RETURN h {.*, embedding: null, search_terms: null, subject_id: hs.id, object_id: o.id} AS fact,
       hs.name AS subject_name, o.name AS object_name, supersedes
ORDER BY fact.valid_from, fact.recorded_at, fact.id
