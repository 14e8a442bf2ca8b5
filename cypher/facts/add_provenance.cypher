// Another episode said the same fact, or an episode confirmed, retracted or corrected it: add its DERIVED_FROM
// edge, and the episode MENTIONS the fact's subject and object entity (as facts/create_batch: not from the record
// of an API write). One edge per (fact, episode) for support (role assertion or confirmation: an episode that
// says a fact twice supports it once) and one per other role, so an episode that asserted a fact and later
// retracts it (or the other way round) keeps both records: what it said first is not overwritten.
// $rows: [{fact_id, episode_id, confidence, source, role, retain_until (DATETIME, ISO 8601 string or null)}];
// an assertion or confirmation refreshes last_confirmed_at and the TTL (on the fact's RELATED edge too, see
// facts/create_batch), unless an episode under legal hold supports the fact (the hold keeps it: no TTL, as
// governance/stamp_fact_retention stamps it). The fact is written (locked) before its edges are read, so two
// writers of one (fact, episode, role) make one edge.
UNWIND $rows AS r
MATCH (f:Fact {id: r.fact_id}) WHERE f.tenant_id = $tenant_id
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
WITH f, ep, r, r.role IN ['assertion', 'confirmation'] AS supports
SET f.last_confirmed_at = CASE WHEN supports THEN $now ELSE f.last_confirmed_at END
WITH f, ep, r, supports
CALL (f, ep, r, supports) {
  OPTIONAL MATCH (f)-[o:DERIVED_FROM]->(ep)
  WHERE (supports AND coalesce(o.role, 'assertion') IN ['assertion', 'confirmation']) OR o.role = r.role
  WITH f, ep, r, count(o) AS recorded
  WHERE recorded = 0
  CREATE (f)-[:DERIVED_FROM {recorded_at: $now, confidence: r.confidence, source: r.source, role: r.role}]->(ep)
}
WITH f, ep, r, supports,
     EXISTS { (f)-[:DERIVED_FROM]->(h:Episode) WHERE h.tenant_id = $tenant_id AND h.legal_hold } AS held
SET f.retain_until = CASE WHEN NOT supports OR r.retain_until IS NULL THEN f.retain_until
                          WHEN held THEN null ELSE datetime(r.retain_until) END
WITH f, ep
CALL (f, ep) {
  WITH f, ep WHERE ep.searchable IS NULL
  MATCH (f)-[:SUBJECT|OBJECT]->(n:Entity)
  MERGE (ep)-[m:MENTIONS]->(n) ON CREATE SET m.recorded_at = $now
}
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.retain_until = f.retain_until
RETURN count(DISTINCT f) AS linked
