// Remove the provenance edges (DERIVED_FROM, every role) of fact $fact_id to episodes $episode_ids: a user deleting
// from their memories a fact other episodes still support takes their episodes' word off it; the episodes stay.
MATCH (f:Fact {id: $fact_id})-[d:DERIVED_FROM]->(e:Episode)
WHERE f.tenant_id = $tenant_id AND e.tenant_id = $tenant_id AND e.id IN $episode_ids
DELETE d
RETURN count(*) AS removed
