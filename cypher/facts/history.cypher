// The timeline that fact $id belongs to: every version of the same subject and predicate (and, for a
// multi-valued predicate, the same object), corrected ones included, oldest valid_from first.
MATCH (f:Fact {id: $id})-[:SUBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id
MATCH (s)<-[:SUBJECT]-(h:Fact {predicate: f.predicate})
WHERE h.tenant_id = $tenant_id AND h.status <> 'candidate' AND ($single_valued OR h.object_key = f.object_key)
  AND (h.retain_until IS NULL OR h.retain_until > $now)
OPTIONAL MATCH (h)-[:OBJECT]->(o:Entity)
OPTIONAL MATCH (h)-[:SUPERSEDES]->(older:Fact)
WITH h, s, o, collect(older.id) AS supersedes
RETURN h {.*, embedding: null, search_terms: null, subject_id: s.id, object_id: o.id} AS fact, s.name AS subject_name,
       o.name AS object_name, supersedes
ORDER BY fact.valid_from, fact.recorded_at
