// End a claimed job: done, skipped, failed (permanent), dead (dead-lettered) or pending again (retry after
// $not_before; $attempts_delta -1 when released at shutdown, which is not the job's fault). Only the holder of the
// claim token can finish it. $stats: bookkeeping set as given (extractor, prompt version, fact counts);
// $usage: {calls, prompt_tokens, completion_tokens, cost_usd} added to the job's running LLM totals.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND e.claim_token = $token
SET e.extraction_status = $status, e.extraction_reason = $reason, e.not_before = $not_before,
    e.finished_at = CASE WHEN $status = 'pending' THEN null ELSE $now END,
    e.attempts = coalesce(e.attempts, 0) + $attempts_delta,
    e.lease_until = null, e.claimed_by = null, e.claim_token = null,
    e.llm_calls = coalesce(e.llm_calls, 0) + $usage.calls,
    e.llm_prompt_tokens = coalesce(e.llm_prompt_tokens, 0) + $usage.prompt_tokens,
    e.llm_completion_tokens = coalesce(e.llm_completion_tokens, 0) + $usage.completion_tokens,
    e.llm_cost_usd = coalesce(e.llm_cost_usd, 0.0) + $usage.cost_usd
SET e += $stats
RETURN e.id AS id
