// The state of the API write that event episode `$id` recorded (api/routes/facts): the answer it kept as JSON (null
// while the write is still running, or when it ran before answers were kept or died before it kept one; '' when it
// failed after something cited the episode) and when the call was recorded. No row: no such episode (a first try
// that failed deleted its record).
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.kind = 'event'
RETURN e.call_result AS result, e.ingested_at AS recorded_at
