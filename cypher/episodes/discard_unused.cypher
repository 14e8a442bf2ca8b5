// Delete an episode that nothing cites: the record of an API write that then failed (api/routes/facts), so a
// refused request leaves nothing behind; the write-policy refusals recorded with it (a redaction) go with it, as in
// episodes/discard_turn. An episode some fact was derived from is kept. Returns the count of episodes deleted.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND NOT EXISTS { (e)<-[:DERIVED_FROM]-(:Fact) }
OPTIONAL MATCH (r:Refusal {tenant_id: $tenant_id}) WHERE r.episode_id = e.id
DETACH DELETE r, e
RETURN count(DISTINCT e) AS deleted
