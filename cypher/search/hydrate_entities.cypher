// Search, phase two: the entities $ids (the few that won fusion) of this tenant, with the `Entity` model's fields
// and temporal values as ISO-8601 strings (see search/hydrate_facts). One row per id found, in no particular order.
UNWIND $ids AS entity_id
MATCH (n:Entity {id: entity_id})
WHERE n.tenant_id = $tenant_id
RETURN n {.id, .tenant_id, .kind, .name, .name_key, .aliases, .email, .domain, .external_ids, .summary,
          created_at: toString(n.created_at), updated_at: toString(n.updated_at)} AS entity
