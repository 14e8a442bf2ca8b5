// The episode $episode_id MENTIONS each entity of $entity_ids (DESIGN.md "Graph model": entity mentions), once per
// pair: what an extractor found in it besides its facts' subjects and objects (facts/create_batch links those).
// Ids of another tenant, or unknown ones, link nothing, and so does the record of an API write (facts/create_batch).
// A new mention's `recorded_at` is $now (transaction time). Returns how many mentions the episode now has of them.
MATCH (ep:Episode {id: $episode_id}) WHERE ep.tenant_id = $tenant_id AND ep.searchable IS NULL
UNWIND $entity_ids AS eid
MATCH (n:Entity {id: eid}) WHERE n.tenant_id = $tenant_id
MERGE (ep)-[m:MENTIONS]->(n) ON CREATE SET m.recorded_at = $now
RETURN count(n) AS linked
