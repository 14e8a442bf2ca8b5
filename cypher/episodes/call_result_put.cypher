// Keep the answer of the API write that `$id` (an event episode, api/routes/facts) recorded, as JSON, so that a
// retry under the same Idempotency-Key replays it instead of writing again. The first answer kept wins; '' (a try
// that failed) is not an answer, and a later try's answer replaces it.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.kind = 'event'
SET e.call_result = CASE WHEN e.call_result IS NULL OR e.call_result = '' THEN $result ELSE e.call_result END
RETURN e.call_result AS result
