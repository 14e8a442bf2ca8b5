// Physically delete episodes $ids with their edges (provenance, mentions, NEXT) and embedding.
UNWIND $ids AS eid
MATCH (e:Episode {id: eid})
WHERE e.tenant_id = $tenant_id
DETACH DELETE e
RETURN count(*) AS deleted
