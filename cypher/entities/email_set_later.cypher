// The entities of $rows ({entity_id, episode_ids}) whose email an episode declared that occurred after the latest
// of the row's episodes: a record older than the one that set the email (a CRM change that arrives late) does not
// replace it (graphmem.store.entities.resolve).
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.entity_id})
MATCH (ep:Episode) WHERE ep.id IN r.episode_ids AND ep.tenant_id = $tenant_id
WITH r, e, max(ep.occurred_at) AS at
WHERE EXISTS { MATCH (d:Episode)-[:DECLARED {attr: 'email'}]->(e) WHERE d.tenant_id = $tenant_id AND d.occurred_at > at }
RETURN collect(r.entity_id) AS later
