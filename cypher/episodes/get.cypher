// One episode by id, within the tenant.
MATCH (e:Episode {id: $id})
WHERE e.tenant_id = $tenant_id
RETURN e {.*, embedding: null} AS episode
