// Every tenant id with an episode some fact was derived from (schema migration 9 -> 10 links each such episode to
// the entities of its facts, meta/backfill_mentions, per tenant).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Episode)<-[:DERIVED_FROM]-(:Fact)
WHERE e.tenant_id IS NOT NULL
RETURN DISTINCT e.tenant_id AS tenant_id
