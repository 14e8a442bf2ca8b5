// The tenant's LLM usage for extraction, summed over its jobs: calls, tokens and cost (USD).
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.llm_calls > 0
RETURN count(e) AS jobs, sum(e.llm_calls) AS llm_calls, sum(e.llm_prompt_tokens) AS prompt_tokens,
       sum(e.llm_completion_tokens) AS completion_tokens, sum(e.llm_cost_usd) AS cost_usd
