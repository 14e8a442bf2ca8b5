// Schema migration 11 -> 12: the next $limit of the tenant's entities by id after $after (a cursor) whose name or an
// alias holds a combining mark ($pattern), with the names their keys are made from.
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.id > $after AND (e.name =~ $pattern OR any(a IN coalesce(e.aliases, []) WHERE a =~ $pattern))
RETURN e.id AS id, e.kind AS kind, e.name AS name, coalesce(e.aliases, []) AS aliases
ORDER BY e.id LIMIT $limit
