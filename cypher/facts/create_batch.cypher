// Create facts with their SUBJECT, OBJECT and DERIVED_FROM (provenance) edges.
// $rows: [{props: {...fact properties, tenant_id included...}, subject_id, object_id (or null), episode_id, role}]
// The tenant guard: s and ep are matched within $tenant_id, so a row of another tenant creates nothing.
UNWIND $rows AS r
MATCH (s:Entity {id: r.subject_id}) WHERE s.tenant_id = $tenant_id
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
OPTIONAL MATCH (o:Entity {id: r.object_id}) WHERE o.tenant_id = $tenant_id
CREATE (f:Fact)
SET f = r.props
CREATE (f)-[:SUBJECT]->(s)
CREATE (f)-[:DERIVED_FROM {recorded_at: r.props.recorded_at, confidence: r.props.confidence,
                           source: r.props.source, role: r.role}]->(ep)
FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END | CREATE (f)-[:OBJECT]->(o))
RETURN count(f) AS created
