// One page of a user's export: episodes $ids (from governance/user_episode_index) still inside retention at $now,
// as maps without embeddings or search terms, oldest first (the caller keeps the public fields through `Episode`).
UNWIND $ids AS eid
MATCH (e:Episode {id: eid})
WHERE e.tenant_id = $tenant_id AND NOT coalesce(e.retain_until <= $now, false)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e {.*, embedding: null, search_terms: null} AS episode
ORDER BY e.occurred_at, e.seq, e.id
