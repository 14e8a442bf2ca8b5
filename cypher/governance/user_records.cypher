// For a user's export: the user's sessions $session_ids, with the pins and summaries of those sessions (maps without
// embeddings; a summary with `covers`, the episodes it covers itself, as cypher/summaries/list gives it; the caller
// keeps the public fields of each through the record's model). Their episodes are read in pages
// (governance/user_episode_index, governance/user_episodes), their refusals by governance/user_refusals. Like every
// read, it leaves out what is past retention at $now before the sweeper removes it: summaries built on an expired
// episode or revising one that is (their text carries it forward; as a window does, cypher/sessions/window_state),
// sessions past their retention (retain_until: idle longer than the tenant's session_ttl_days) with their pins and
// summaries, and pin candidates whose source turn is past retention (as pins/list).
CALL () {
  OPTIONAL MATCH (s:Session {tenant_id: $tenant_id})
  WHERE s.id IN $session_ids AND NOT coalesce(s.retain_until <= $now, false)
  RETURN collect(s {.*}) AS sessions
}
CALL () {
  OPTIONAL MATCH (p:Pin {tenant_id: $tenant_id})
  WHERE p.session_id IN $session_ids
    AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: p.session_id}) WHERE ss.retain_until <= $now }
    AND NOT (p.status = 'candidate' AND EXISTS {
          MATCH (c:Episode {tenant_id: $tenant_id, id: p.set_by})
          WHERE c.retain_until <= $now
             OR EXISTS { MATCH (cs:Session {tenant_id: $tenant_id, id: c.session_id}) WHERE cs.retain_until <= $now } })
  RETURN collect(p {.*, embedding: null, search_terms: null}) AS pins
}
CALL () {
  OPTIONAL MATCH (m:Summary {tenant_id: $tenant_id})
  WHERE m.session_id IN $session_ids
    AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: m.session_id}) WHERE ss.retain_until <= $now }
    AND NOT EXISTS { MATCH (m)-[:REVISES*0..]->(:Summary)-[:COVERS]->(x) WHERE x.retain_until <= $now }
  RETURN collect(m {.*, embedding: null, search_terms: null, covers: COUNT { (m)-[:COVERS]->() }}) AS summaries
}
RETURN sessions, pins, summaries
