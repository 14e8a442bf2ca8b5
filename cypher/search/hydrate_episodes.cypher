// Search, phase two: the episodes $ids (the few that won fusion) of this tenant, with the `Episode` model's fields
// only (not the job bookkeeping) and temporal values as ISO-8601 strings (see search/hydrate_facts).
// One row per id found, in no particular order.
UNWIND $ids AS episode_id
MATCH (e:Episode {id: episode_id})
WHERE e.tenant_id = $tenant_id
RETURN e {.id, .tenant_id, .kind, .content, .session_id, .user_id, .role, .speaker, .idempotency_key, .source,
          .token_count, .extraction_status, .legal_hold, .agent_version, .prompt_version, .tool_version,
          occurred_at: toString(e.occurred_at), ingested_at: toString(e.ingested_at),
          retain_until: toString(e.retain_until)} AS episode
