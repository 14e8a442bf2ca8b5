// One extraction job (its episode's job fields), within the tenant.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id
RETURN e {.id, .kind, .extraction_status, .extraction_reason, .attempts, .claimed_by, .lease_until, .not_before,
          .claimed_at, .finished_at, .ingested_at, .extractor, .extraction_prompt_version, .llm_calls,
          .llm_prompt_tokens, .llm_completion_tokens, .llm_cost_usd, .facts_asserted, .facts_refused,
          .facts_retracted, .disambiguation_mentions, .disambiguation_linked, .disambiguation_prompt_version,
          .recovered_from_crash} AS job
