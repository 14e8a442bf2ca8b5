// How fact $fact_id stands when the user whose episodes are $episode_ids (governance/target_episodes) and whose own
// entities are $entity_ids (governance/user_entities) deletes it from their memories: `own`, the user's episodes it
// is derived from (any role), `supported`, whether an episode outside them supports it (an assertion or confirmation
// edge, as governance/facts_of_episodes counts support), and `about_user`, whether its subject or object is one of
// the user's own entities. No row when the fact is not in this tenant.
MATCH (f:Fact {id: $fact_id})
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH (f)-[:DERIVED_FROM]->(e:Episode)
WHERE e.tenant_id = $tenant_id AND e.id IN $episode_ids
WITH f, collect(DISTINCT e.id) AS own
RETURN own,
       EXISTS { MATCH (f)-[d:DERIVED_FROM]->(o:Episode)
                WHERE o.tenant_id = $tenant_id AND NOT o.id IN $episode_ids
                  AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] } AS supported,
       EXISTS { MATCH (f)-[:SUBJECT|OBJECT]->(n:Entity) WHERE n.id IN $entity_ids } AS about_user
