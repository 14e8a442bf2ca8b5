// Schema migration 11 -> 12: the next $limit of the tenant's facts by id after $after (a cursor) whose literal value
// holds a combining mark ($pattern), with the value their object_key ("v:" + graphmem.models.value_key) is made of.
MATCH (f:Fact {tenant_id: $tenant_id})
WHERE f.id > $after AND toString(f.value) =~ $pattern
RETURN f.id AS id, f.value AS value
ORDER BY f.id LIMIT $limit
