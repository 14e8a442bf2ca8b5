// The write-policy refusals of a user's episodes $episode_ids (a refusal names its episode, or is linked to one),
// newest first (maps without embeddings). Like every read, it leaves out the refusals of an episode past
// retention at $now (its own retain_until or its session's) before the sweeper removes them (policy/list reads
// them the same way). Apart from governance/user_records, so that the user's refusals (GET
// /v1/memories/candidates) do not read every episode's content.
OPTIONAL MATCH (r:Refusal {tenant_id: $tenant_id})
WHERE (r.episode_id IN $episode_ids
       OR EXISTS { MATCH (r)--(e:Episode) WHERE e.tenant_id = $tenant_id AND e.id IN $episode_ids })
  AND NOT EXISTS {
    MATCH (e:Episode {id: r.episode_id})
    WHERE e.tenant_id = $tenant_id
      AND (e.retain_until <= $now
           OR EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
  }
  AND NOT EXISTS {
    MATCH (r)--(e:Episode)
    WHERE e.tenant_id = $tenant_id
      AND (e.retain_until <= $now
           OR EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
  }
WITH r ORDER BY r.created_at DESC, r.id
RETURN collect(r {.*, embedding: null, search_terms: null}) AS refusals
