// Schema migrations 11 -> 12 and 13 -> 14: the tenant's entities whose name or an alias matches $pattern, with
// the names their keys are made from. Read in one pass (Database.stream), in no particular order.
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.name =~ $pattern OR any(a IN coalesce(e.aliases, []) WHERE a =~ $pattern)
RETURN e.id AS id, e.kind AS kind, e.name AS name, coalesce(e.aliases, []) AS aliases
