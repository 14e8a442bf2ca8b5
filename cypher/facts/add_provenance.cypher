// Another episode said the same fact (or retracted/confirmed it): add a DERIVED_FROM edge once per episode, and
// the episode MENTIONS the fact's subject and object entity (as facts/create_batch: not from the record of an API
// write).
// $rows: [{fact_id, episode_id, confidence, source, role, retain_until (DATETIME, ISO 8601 string or null)}];
// an assertion or confirmation refreshes last_confirmed_at and the TTL (on the fact's RELATED edge too, see facts/create_batch).
UNWIND $rows AS r
MATCH (f:Fact {id: r.fact_id}) WHERE f.tenant_id = $tenant_id
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
MERGE (f)-[d:DERIVED_FROM]->(ep)
  ON CREATE SET d.recorded_at = $now, d.confidence = r.confidence, d.source = r.source, d.role = r.role
SET f.last_confirmed_at = CASE WHEN r.role IN ['assertion', 'confirmation'] THEN $now ELSE f.last_confirmed_at END,
    f.retain_until = CASE WHEN r.role IN ['assertion', 'confirmation'] AND r.retain_until IS NOT NULL THEN datetime(r.retain_until)
                          ELSE f.retain_until END
WITH f, d, ep
CALL (f, ep) {
  WITH f, ep WHERE ep.searchable IS NULL
  MATCH (f)-[:SUBJECT|OBJECT]->(n:Entity)
  MERGE (ep)-[m:MENTIONS]->(n) ON CREATE SET m.recorded_at = $now
}
WITH f, d
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.retain_until = f.retain_until
RETURN count(d) AS linked
