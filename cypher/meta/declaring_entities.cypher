// Schema migration 16 -> 17: the ids of the tenant's entities that carry an alias, an external id, an email, a
// domain or a summary (meta/backfill_declarations records who declared them). Read in one pass (Database.stream),
// in no particular order.
MATCH (n:Entity {tenant_id: $tenant_id})
WHERE n.email IS NOT NULL OR n.domain IS NOT NULL OR n.summary IS NOT NULL OR size(n.external_ids) > 0
   OR size(n.aliases) > 0
RETURN n.id AS id
