// Every tenant id on searchable nodes whose text holds a character outside ASCII ($pattern matches such text):
// schema migrations 8 -> 9 (curly apostrophes) and 10 -> 11 (accents, fullwidth letters, ligatures) recompute their
// search_terms per tenant, because graphmem.store.fulltext.words folds them now; 17 -> 18 those whose text holds a
// word with an inner apostrophe ($pattern: graphmem.store.schema.JOINED), now also indexed without it.
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.search_terms IS NOT NULL
  AND coalesce(n.statement, n.content, n.search_text, '') =~ $pattern
RETURN DISTINCT n.tenant_id AS tenant_id
