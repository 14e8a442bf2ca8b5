// Keep the answer of the API write that `$id` (an event episode, api/routes/facts) recorded, as JSON, so that a
// retry under the same Idempotency-Key replays it instead of writing again. The first answer kept wins.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.kind = 'event'
SET e.call_result = coalesce(e.call_result, $result)
RETURN e.call_result AS result
