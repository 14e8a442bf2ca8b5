// What facts $ids believe and what their remaining provenance supports: the fact's source and confidence, and
// the source and confidence of each assertion or confirmation edge still there (after an erasure removed some
// episodes: graphmem.governance.erasure recomputes the belief from these).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH (f)-[d:DERIVED_FROM]->(e:Episode)
WHERE e.tenant_id = $tenant_id AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation']
RETURN f.id AS id, f.source AS source, f.confidence AS confidence,
       collect({source: d.source, confidence: d.confidence}) AS support
