// Schema migrations 11 -> 12 and 13 -> 14: store the object_key of facts with a literal value. $rows: [{id, object_key}].
// Returns how many facts were updated.
UNWIND $rows AS r
MATCH (f:Fact {tenant_id: $tenant_id, id: r.id})
SET f.object_key = r.object_key
RETURN count(f) AS updated
