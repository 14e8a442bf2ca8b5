// One fact with its subject and object.
MATCH (f:Fact {id: $id})-[:SUBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f {.*, embedding: null, subject_id: s.id, object_id: o.id} AS fact, s.name AS subject_name, o.name AS object_name
