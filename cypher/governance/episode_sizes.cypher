// The session and content size (characters) of each of episodes $ids that the tenant still has, by session, then
// occurred_at, then id: what an erasure or expiry splits into steps of bounded size (graphmem.governance.erasure.steps).
UNWIND $ids AS eid
MATCH (e:Episode {tenant_id: $tenant_id, id: eid})
RETURN e.id AS id, e.session_id AS session_id, size(e.content) AS chars
ORDER BY session_id, e.occurred_at, id
