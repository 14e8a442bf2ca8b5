// Delete an episode that nothing cites: the record of an API write that then failed (api/routes/facts), so a
// refused request leaves nothing behind. An episode some fact was derived from is kept. Returns the count.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND NOT EXISTS { (e)<-[:DERIVED_FROM]-(:Fact) }
DETACH DELETE e
RETURN count(*) AS deleted
