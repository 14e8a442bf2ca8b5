// The tenant's LLM usage for extraction, summed over its jobs: calls, tokens and cost (USD). As jobs/counts, none of
// an episode past retention at $now (past its own retain_until, or of a session past its retention).
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.llm_calls > 0 AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN count(e) AS jobs, sum(e.llm_calls) AS llm_calls, sum(e.llm_prompt_tokens) AS prompt_tokens,
       sum(e.llm_completion_tokens) AS completion_tokens, sum(e.llm_cost_usd) AS cost_usd
