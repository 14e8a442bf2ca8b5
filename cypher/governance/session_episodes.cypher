// The episode ids of sessions $session_ids.
UNWIND $session_ids AS sid
MATCH (e:Episode {tenant_id: $tenant_id, session_id: sid})
RETURN collect(e.id) AS episodes
