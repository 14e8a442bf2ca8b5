// Facts with provenance in $episode_ids, and whether another episode outside that set still supports them
// (an assertion or confirmation edge; retraction and correction edges do not support a fact).
UNWIND $episode_ids AS eid
MATCH (e:Episode {id: eid})<-[:DERIVED_FROM]-(f:Fact)
WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
WITH DISTINCT f
RETURN f.id AS id,
       EXISTS { MATCH (f)-[d:DERIVED_FROM]->(o:Episode)
                WHERE NOT o.id IN $episode_ids AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] } AS supported
