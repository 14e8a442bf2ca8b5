// The provenance edges of a candidate fact (carried over to the fact a confirmation creates).
MATCH (f:Fact {id: $fact_id})-[d:DERIVED_FROM]->(e:Episode)
WHERE f.tenant_id = $tenant_id AND e.tenant_id = $tenant_id
RETURN e.id AS episode_id, d.confidence AS confidence, d.source AS source
