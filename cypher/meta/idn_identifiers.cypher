// Schema migration 20 -> 21: the tenant's entities whose email or domain matches $pattern, with both, oldest first
// (of two entities whose emails, or domains, become one, the older keeps it). Sorted before the first row is
// returned, so the writes of the migration, while it reads on, do not change what it reads (Database.stream).
MATCH (e:Entity {tenant_id: $tenant_id})
WHERE e.email =~ $pattern OR e.domain =~ $pattern
RETURN e.id AS id, e.email AS email, e.domain AS domain
ORDER BY e.created_at, e.id
