// Brief entity maps by id, within the tenant (what resolution and fact assertion need; no timestamps).
MATCH (e:Entity)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
RETURN e {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary} AS entity
