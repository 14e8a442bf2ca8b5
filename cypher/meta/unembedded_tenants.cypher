// Every tenant id with a fact, entity or episode that has no embedding (`graphmem embeddings reembed` then
// embeds them per tenant, Indexer.reembed).
// tenant-free: re-embedding over every tenant, run only on explicit request
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.embedding IS NULL
RETURN DISTINCT n.tenant_id AS tenant_id
