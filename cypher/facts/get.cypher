// One fact with its subject and object; facts past retention are hidden unless $now is null (erasure).
MATCH (f:Fact {id: $id})-[:SUBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id AND ($now IS NULL OR f.retain_until IS NULL OR f.retain_until > $now)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.*, embedding: null, search_terms: null, subject_id: s.id, object_id: o.id} AS fact, s.name AS subject_name, o.name AS object_name
