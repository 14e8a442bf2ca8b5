// Insert episode $id into its session's NEXT chain at its (occurred_at, seq) position. The session keeps its chain's
// tail (last_episode_id): an episode at or after the tail is linked in O(1); otherwise (out of order, first episode,
// or a tail that erasure removed) it is inserted after the latest episode before it (a scan of the session), and
// becomes the tail if nothing follows it.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
MATCH (e:Episode {id: $id}) WHERE e.tenant_id = $tenant_id
OPTIONAL MATCH (last:Episode {id: s.last_episode_id}) WHERE last.tenant_id = $tenant_id
CALL (s, e, last) {
  WITH s, e, last WHERE last IS NOT NULL AND last.occurred_at <= e.occurred_at
  CREATE (last)-[:NEXT]->(e)
  SET s.last_episode_id = e.id
  RETURN last.id AS previous_id, null AS next_id
  UNION
  WITH s, e, last WHERE last IS NULL OR last.occurred_at > e.occurred_at
  OPTIONAL MATCH (p:Episode {tenant_id: $tenant_id, session_id: $session_id})
    WHERE p.id <> e.id AND (p.occurred_at < e.occurred_at OR (p.occurred_at = e.occurred_at AND p.seq < e.seq))
  WITH s, e, p ORDER BY p.occurred_at DESC, p.seq DESC LIMIT 1
  OPTIONAL MATCH (f:Episode {tenant_id: $tenant_id, session_id: $session_id})
    WHERE p IS NULL AND f.id <> e.id
  WITH s, e, p, f ORDER BY f.occurred_at ASC, f.seq ASC LIMIT 1
  OPTIONAL MATCH (p)-[old:NEXT]->(n:Episode)
  WITH s, e, p, old, coalesce(n, f) AS nxt
  DELETE old
  SET s.last_episode_id = CASE WHEN nxt IS NULL THEN e.id ELSE s.last_episode_id END
  FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | CREATE (p)-[:NEXT]->(e))
  FOREACH (_ IN CASE WHEN nxt IS NULL THEN [] ELSE [1] END | CREATE (e)-[:NEXT]->(nxt))
  RETURN p.id AS previous_id, nxt.id AS next_id
}
RETURN previous_id, next_id
