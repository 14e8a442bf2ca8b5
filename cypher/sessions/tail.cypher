// The session's raw tail, read in one statement (so a turn committed meanwhile cannot push an older episode out
// of it): the episodes since the window start that no active summary covers, oldest first, each as the fields a
// compaction chooses by (id, token_count, occurred_at, ingested_at), not its content: a bulk-imported tail
// of 2,781 turns of 99k characters read in full ran Neo4j out of heap; the turns folded are read by
// sessions/tail_turns. No rows when the session does not exist or is past its retention (retain_until), as after
// the sweep.
// `occurred_at IS NOT NULL` (every episode has one) lets the planner seek episode_tenant_session
// (tenant_id, session_id, occurred_at) instead of scanning the tenant's episodes (a hint: the planner's
// statistics can prefer episode_tenant on a large tenant).
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WHERE NOT coalesce(s.retain_until <= $now, false)
MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
USING INDEX e:Episode(tenant_id, session_id, occurred_at)
WHERE e.occurred_at IS NOT NULL
  AND coalesce(e.seq, 0) >= coalesce(s.window_from_seq, 0)
  AND NOT coalesce(e.retain_until <= $now, false)
  AND NOT EXISTS { MATCH (:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e) }
RETURN e {.id, .token_count, .occurred_at, .ingested_at} AS episode
ORDER BY e.occurred_at, e.seq
