// Schema migrations 11 -> 12 and 13 -> 14: the tenant's facts whose literal value matches $pattern, with the
// value their object_key ("v:" + graphmem.identifiers.value_key) is made of. Read in one pass (Database.stream), in no
// particular order.
MATCH (f:Fact {tenant_id: $tenant_id})
WHERE toString(f.value) =~ $pattern
RETURN f.id AS id, f.value AS value
