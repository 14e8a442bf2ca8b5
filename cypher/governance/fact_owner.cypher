// Whether fact $fact_id belongs to the user: provenance in the user's episodes $episode_ids, or about one of
// the user's own entities $entity_ids. No row when the fact is not in this tenant.
MATCH (f:Fact {id: $fact_id})
WHERE f.tenant_id = $tenant_id
RETURN f.status AS status,
       EXISTS { MATCH (f)-[:DERIVED_FROM]->(e:Episode) WHERE e.id IN $episode_ids }
       OR EXISTS { MATCH (f)-[:SUBJECT|OBJECT]->(n:Entity) WHERE n.id IN $entity_ids } AS owned
