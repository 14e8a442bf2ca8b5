// Where fact $id came from: each episode that said, confirmed, retracted or corrected it (expired episodes
// are gone at once, before the sweeper removes them). Oldest recorded first (then occurred_at, episode id, role),
// paged here ($offset, $limit): only the page's episodes have their content read.
MATCH (f:Fact {id: $id})-[d:DERIVED_FROM]->(ep:Episode)
WHERE f.tenant_id = $tenant_id AND ep.tenant_id = $tenant_id
  AND (ep.retain_until IS NULL OR ep.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: ep.session_id}) WHERE ss.retain_until <= $now }
WITH d, ep
ORDER BY d.recorded_at, ep.occurred_at, ep.id, d.role
SKIP $offset LIMIT $limit
RETURN ep.id AS episode_id, ep.occurred_at AS occurred_at, d.recorded_at AS recorded_at, d.source AS source,
       d.confidence AS confidence, d.role AS role, ep.session_id AS session_id, ep.kind AS episode_kind,
       ep.content AS content
