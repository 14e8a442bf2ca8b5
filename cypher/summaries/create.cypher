// A new summary revision: COVERS the episodes it compacts, REVISES the previous active revision (kept for rollback).
CREATE (s:Summary {tenant_id: $tenant_id, id: $id})
SET s += $props, s.status = 'active', s.created_at = $now
WITH s
OPTIONAL MATCH (prev:Summary {tenant_id: $tenant_id, id: $previous_id})
FOREACH (_ IN CASE WHEN prev IS NULL THEN [] ELSE [1] END | CREATE (s)-[:REVISES]->(prev))
WITH s
CALL (s) {
  MATCH (e:Episode)
  WHERE e.tenant_id = $tenant_id AND e.id IN $episode_ids
  CREATE (s)-[:COVERS]->(e)
  RETURN count(e) AS covered
}
RETURN s {.*} AS summary, covered
