// The answer kept for the API write that event episode `$id` recorded (null when none was kept: the write is still
// running, it failed, or it ran before answers were kept).
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.kind = 'event'
RETURN e.call_result AS result
