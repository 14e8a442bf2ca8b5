// Every tenant id with an entity whose name or an alias, or a fact whose literal value, matches $pattern: schema
// migrations 11 -> 12 (text with a combining mark: graphmem.identifiers.name_key keeps those marks now, they are the
// vowels of Devanagari, Tamil, Thai...) and 13 -> 14 (a variation selector, or no letter or digit) recompute their
// normalised keys per tenant (graphmem.store.schema.rekey_marked_names).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (n)
WHERE n.tenant_id IS NOT NULL
  AND ((n:Entity AND (n.name =~ $pattern OR any(a IN coalesce(n.aliases, []) WHERE a =~ $pattern)))
       OR (n:Fact AND toString(n.value) =~ $pattern))
RETURN DISTINCT n.tenant_id AS tenant_id
