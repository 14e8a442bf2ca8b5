// Schema migration 9 -> 10: the next $limit of the tenant's episodes by id after $after (a cursor, so each episode
// comes once) MENTION the subject and object entities of the facts derived from them, as facts/create_batch now
// writes (not from the record of an API write; once per pair: MERGE, so a process running the migration beside
// another, or beside live writes, makes no second edge), `recorded_at` the earliest provenance edge's between them. Returns the last episode id of the
// batch (null when there was none) and how many mentions were created.
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.id > $after
WITH e ORDER BY e.id LIMIT $limit
WITH collect(e) AS batch
CALL (batch) {
  UNWIND batch AS e
  WITH e WHERE e.searchable IS NULL
  MATCH (e)<-[d:DERIVED_FROM]-(f:Fact)-[:SUBJECT|OBJECT]->(n:Entity)
  WHERE f.tenant_id = $tenant_id AND n.tenant_id = $tenant_id AND NOT EXISTS { (e)-[:MENTIONS]->(n) }
  WITH e, n, min(d.recorded_at) AS at
  MERGE (e)-[m:MENTIONS]->(n)
    ON CREATE SET m.recorded_at = at
  RETURN count(*) AS created
}
RETURN batch[-1].id AS last, created
