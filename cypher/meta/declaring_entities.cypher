// Schema migration 16 -> 17: the ids of the tenant's entities (each has a name, and may carry aliases, external
// ids, an email, a domain or a summary: meta/backfill_declarations records who declared them). Read in one pass
// (Database.stream), in no particular order.
MATCH (n:Entity {tenant_id: $tenant_id})
RETURN n.id AS id
