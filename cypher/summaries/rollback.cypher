// Roll back the current revision (as summaries/current reads it): it is kept but marked rolled_back; the revision
// it revised is current again, and the episodes only the rolled-back revision covered return to the raw tail.
// Nothing when the session is past its retention (retain_until: idle longer than the tenant's session_ttl_days,
// not yet swept), and a revision covering an episode past retention (or revising one that does) is not current:
// every read hides them, as after the sweep.
MATCH (s:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
WHERE NOT EXISTS { MATCH (s)-[:REVISES*0..]->(:Summary)-[:COVERS]->(x) WHERE x.retain_until <= $now }
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: $session_id}) WHERE ss.retain_until <= $now }
WITH s ORDER BY s.rev DESC LIMIT 1
SET s.status = 'rolled_back', s.rolled_back_at = $now
RETURN s {.*} AS summary
