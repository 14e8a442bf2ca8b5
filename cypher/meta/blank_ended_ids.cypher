// Schema migrations 20 -> 21 and 22 -> 23: the tenant's external ids whose key matches $pattern (a character
// graphmem.identifiers.blank finds blank at either end; or 'user:' and such an id, 22 -> 23), with the entity each
// identifies, by key. Sorted before the first row is returned, so the writes of the migration, while it reads on,
// do not change what it reads (Database.stream).
MATCH (x:ExternalId {tenant_id: $tenant_id})
WHERE x.key =~ $pattern
RETURN x.key AS key, x.entity_id AS entity_id
ORDER BY x.key
