// Schema migration 9 -> 10: the ids of the tenant's episodes that some fact was derived from (meta/backfill_mentions
// links them to the facts' entities). Read in one pass (Database.stream), in no particular order; the record of an
// API write (`searchable: false`) mentions nothing.
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.searchable IS NULL AND EXISTS { (e)<-[:DERIVED_FROM]-(:Fact) }
RETURN e.id AS id
