// Physically delete facts $ids with their edges and embedding (erasure or expiry).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})
WHERE f.tenant_id = $tenant_id
DETACH DELETE f
RETURN count(*) AS deleted
