// The facts episode $episode_id retracted (provenance role 'retraction'; a retried retraction replays them).
MATCH (f:Fact)-[:DERIVED_FROM {role: 'retraction'}]->(e:Episode {id: $episode_id})
WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
RETURN f.id AS fact_id
ORDER BY fact_id
