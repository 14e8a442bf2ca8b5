// Schema migration 5 -> 6: give up to $limit of the tenant's facts that have an entity object and no RELATED edge
// yet their derived (subject)-[:RELATED]->(object) edge (the copy facts/create_batch writes). Returns how many.
MATCH (f:Fact {tenant_id: $tenant_id})-[:OBJECT]->(o:Entity)
WHERE NOT EXISTS { ()-[:RELATED {fact_id: f.id}]->() }
WITH f, o LIMIT $limit
MATCH (f)-[:SUBJECT]->(s:Entity)
CREATE (s)-[l:RELATED]->(o)
SET l = f {.tenant_id, .predicate, .status, .valid_from, .valid_to, .closed_at, .prior_valid_to, .reclosed_at, .recorded_at, .expired_at, .retain_until, .confidence, fact_id: f.id}
RETURN count(l) AS created
