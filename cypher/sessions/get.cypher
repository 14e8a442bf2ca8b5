// One session of the tenant, with its pin count and current summary revision.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
RETURN s {.*} AS session,
       COUNT { MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id}) WHERE p.status = 'active' } AS pins,
       COUNT { MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id}) } AS episodes
