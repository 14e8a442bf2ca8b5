// Subject and object entities of facts $ids that have no embedding yet (text: name and aliases).
UNWIND $ids AS id
MATCH (f:Fact {id: id})-[:SUBJECT|OBJECT]->(e:Entity)
WHERE f.tenant_id = $tenant_id AND e.tenant_id = $tenant_id AND e.embedding IS NULL
RETURN DISTINCT e.id AS id, e.search_text AS text
