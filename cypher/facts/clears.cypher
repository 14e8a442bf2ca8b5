// The times (integer microseconds since the epoch, UTC) of the recorded clears of $predicate on the entity
// $entity_id on side $side ('subject' or 'object', facts/record_clear), earliest first. Read under the entity's lock.
MATCH (n:Entity {id: $entity_id})-[c:CLEARED {predicate: $predicate, side: $side}]->(ep:Episode)
WHERE n.tenant_id = $tenant_id AND ep.tenant_id = $tenant_id
RETURN DISTINCT c.at.epochSeconds * 1000000 + c.at.microsecond AS at_us
ORDER BY at_us
