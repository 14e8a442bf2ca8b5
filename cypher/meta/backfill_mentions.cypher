// Schema migration 9 -> 10: the tenant's episodes $ids MENTION the subject and object entities of the facts derived
// from them, as facts/create_batch now writes (once per pair: MERGE, so a process running the migration beside
// another, or beside live writes, makes no second edge), `recorded_at` the earliest provenance edge's between them.
// Returns how many mentions were created.
UNWIND $ids AS id
MATCH (e:Episode {id: id})<-[d:DERIVED_FROM]-(f:Fact)-[:SUBJECT|OBJECT]->(n:Entity)
WHERE e.tenant_id = $tenant_id AND e.searchable IS NULL AND f.tenant_id = $tenant_id AND n.tenant_id = $tenant_id
  AND NOT EXISTS { (e)-[:MENTIONS]->(n) }
WITH e, n, min(d.recorded_at) AS at
MERGE (e)-[m:MENTIONS]->(n)
  ON CREATE SET m.recorded_at = at
RETURN count(*) AS created
