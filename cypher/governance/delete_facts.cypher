// Physically delete facts $ids with their edges, their RELATED edge (facts/create_batch) and embedding (erasure
// or expiry). Returns the count and the ids of the episodes they were derived from, whose full-text terms the
// caller refreshes (episodes/refresh_fact_terms, in the same transaction: graphmem.store.facts.delete).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH ()-[l:RELATED {fact_id: fid}]->()
DELETE l
WITH f, [(f)-[:DERIVED_FROM]->(e:Episode) | e.id] AS episode_ids
DETACH DELETE f
WITH count(f) AS deleted, collect(episode_ids) AS lists
RETURN deleted, reduce(all = [], ids IN lists | all + ids) AS episode_ids
