// Every fact whose subject or object is one of $entity_ids (erasing a user's own entity takes these along).
UNWIND $entity_ids AS eid
MATCH (e:Entity {id: eid})<-[:SUBJECT|OBJECT]-(f:Fact)
WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
RETURN DISTINCT f.id AS id
