// Record a clear ("the CRM cleared it": a mapped field set to null, graphmem.ingest.apply) of $predicate on the
// entity $entity_id as of $at (ISO 8601), said by episode $episode_id: (entity)-[:CLEARED {predicate, side, at}]->
// (episode). $side is 'subject' (the entity's own $predicate facts) or 'object' (the $predicate facts pointing at
// it). A late value older than the clear ends there (graphmem.temporal.decide, graphmem.ingest.apply._exclusive).
// The edge lives and dies with its episode and entity (both are DETACH DELETEd by erasure and the sweeper), so an
// erased clear leaves no trace. Takes the entity's write lock first (as facts/lock_subjects), so a concurrent
// assertion about it reads the clear, or the clear's retraction sees that assertion. Once per episode, predicate,
// side and time (a replayed job adds nothing). Returns how many clears were recorded (0: unknown entity/episode).
MATCH (n:Entity {id: $entity_id}) WHERE n.tenant_id = $tenant_id
SET n.fact_seq = coalesce(n.fact_seq, 0) + 1
WITH n
MATCH (ep:Episode {id: $episode_id}) WHERE ep.tenant_id = $tenant_id
MERGE (n)-[c:CLEARED {predicate: $predicate, side: $side, at: datetime($at)}]->(ep)
ON CREATE SET c.tenant_id = $tenant_id, c.recorded_at = $now
RETURN count(c) AS recorded
