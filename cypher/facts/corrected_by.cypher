// The fact that corrected fact $fact_id on the word of episode $episode_id (a retried correction replays it):
// the newer fact SUPERSEDES the old one and was derived from that episode. No row when there is none.
MATCH (old:Fact {id: $fact_id})<-[:SUPERSEDES]-(new:Fact)-[d:DERIVED_FROM]->(e:Episode {id: $episode_id})
WHERE old.tenant_id = $tenant_id AND new.tenant_id = $tenant_id AND e.tenant_id = $tenant_id
  AND d.role IN ['assertion', 'confirmation']
RETURN new.id AS fact_id
LIMIT 1
