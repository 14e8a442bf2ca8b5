// Every tenant id on searchable nodes whose text holds a curly or modifier-letter apostrophe ($marks:
// graphmem.store.fulltext.APOSTROPHES): schema migration 8 -> 9 recomputes their search_terms per tenant.
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.search_terms IS NOT NULL
  AND any(m IN $marks WHERE coalesce(n.statement, n.content, n.search_text, '') CONTAINS m)
RETURN DISTINCT n.tenant_id AS tenant_id
