// The facts about entities $ids (as subject or object) that an erasure renamed (governance/rename_entities), with
// what their generated statement is made of: predicate, value, statement, and the subject's and object's id and
// name. graphmem.governance.erasure writes again the statements made from the old names (governance/restate_facts).
UNWIND $ids AS id
MATCH (:Entity {tenant_id: $tenant_id, id: id})<-[:SUBJECT|OBJECT]-(f:Fact)
WHERE f.tenant_id = $tenant_id
WITH DISTINCT f
MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
RETURN f.id AS id, f.predicate AS predicate, f.value AS value, f.statement AS statement,
       s.id AS subject_id, s.name AS subject_name, o.id AS object_id, o.name AS object_name
ORDER BY f.id
