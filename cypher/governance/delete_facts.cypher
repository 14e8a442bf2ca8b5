// Physically delete facts $ids with their edges, their RELATED edge (facts/create_batch) and embedding (erasure
// or expiry).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH ()-[l:RELATED {fact_id: fid}]->()
DELETE l
DETACH DELETE f
RETURN count(*) AS deleted
