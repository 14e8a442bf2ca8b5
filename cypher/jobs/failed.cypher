// The tenant's failed and dead-lettered extraction jobs, most recent first, paginated; as jobs/get, none of an
// episode past retention at $now (past its own retain_until, or of a session past its retention).
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.extraction_status IN ['failed', 'dead']
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e {.id, .kind, .extraction_status, .extraction_reason, .attempts, .claimed_by, .lease_until, .not_before,
          .claimed_at, .finished_at, .ingested_at, .extractor, .extraction_prompt_version, .llm_calls,
          .llm_prompt_tokens, .llm_completion_tokens, .llm_cost_usd, .facts_asserted, .facts_refused,
          .facts_retracted, .disambiguation_mentions, .disambiguation_linked, .disambiguation_prompt_version,
          .recovered_from_crash} AS job
ORDER BY e.finished_at DESC, e.id
SKIP $offset LIMIT $limit
