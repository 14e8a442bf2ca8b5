// The attributes of entities that episodes $episode_ids declared (entities/declare_batch) and no other episode
// did: what erasing those episodes strips from the entities that survive (read before the episodes, and with them
// their DECLARED edges, are deleted). An attribute without DECLARED edges (written without an episode) is not here.
// Rows: {entity_id, what ('alias', 'external_id', 'name', 'email', 'domain' or 'summary'), key (an Alias's or
// ExternalId's)}.
UNWIND $episode_ids AS eid
MATCH (ep:Episode {id: eid})-[d:DECLARED]->(x)
WHERE ep.tenant_id = $tenant_id AND x.tenant_id = $tenant_id
WITH DISTINCT x, coalesce(d.attr, '') AS attr
WHERE NOT EXISTS { MATCH (o:Episode)-[d2:DECLARED]->(x)
                   WHERE NOT o.id IN $episode_ids AND coalesce(d2.attr, '') = attr }
RETURN CASE WHEN x:Entity THEN x.id ELSE x.entity_id END AS entity_id,
       CASE WHEN x:Alias THEN 'alias' WHEN x:ExternalId THEN 'external_id' ELSE attr END AS what,
       x.key AS key
