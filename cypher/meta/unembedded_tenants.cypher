// Every tenant id with a fact, entity or episode that has no embedding (`graphmem embeddings reembed` then
// embeds them per tenant, Indexer.reembed; a worker started with an embedder backfills them, Worker._seed_backfill).
// tenant-free: embedding over every tenant, on explicit request or once per worker start
MATCH (n) WHERE (n:Fact OR n:Episode OR n:Entity) AND n.tenant_id IS NOT NULL AND n.embedding IS NULL
  AND n.searchable IS NULL
RETURN DISTINCT n.tenant_id AS tenant_id
