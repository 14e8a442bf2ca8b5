// The distinct session ids of episodes $ids.
UNWIND $ids AS eid
MATCH (e:Episode {id: eid})
WHERE e.tenant_id = $tenant_id AND e.session_id IS NOT NULL
RETURN collect(DISTINCT e.session_id) AS sessions
