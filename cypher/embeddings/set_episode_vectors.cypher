// Store episode embeddings as float32 vector properties (indexed by the episode_embedding vector index).
// $rows: [{id, vector}]
UNWIND $rows AS r
MATCH (n:Episode {id: r.id})
WHERE n.tenant_id = $tenant_id
CALL db.create.setNodeVectorProperty(n, 'embedding', r.vector)
RETURN count(n) AS stored
