// One episode by id, within the tenant.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e {.*, embedding: null, search_terms: null} AS episode
