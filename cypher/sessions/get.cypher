// One session of the tenant, with its pin count and current summary revision. A session past its retention (retain_until: idle longer than the tenant's session_ttl_days) is gone, as after
// the sweep.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WHERE NOT coalesce(s.retain_until <= $now, false)
RETURN s {.*} AS session,
       COUNT { MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id}) WHERE p.status = 'active' } AS pins,
       COUNT { MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id}) } AS episodes
