// Entities mentioned by episodes $episode_ids or linked to facts $fact_ids: candidates for clean-up.
CALL () {
  UNWIND $episode_ids AS eid
  MATCH (e:Episode {id: eid})-[:MENTIONS]->(n:Entity)
  WHERE e.tenant_id = $tenant_id AND n.tenant_id = $tenant_id
  RETURN n.id AS id
  UNION
  UNWIND $fact_ids AS fid
  MATCH (f:Fact {id: fid})-[:SUBJECT|OBJECT]->(n:Entity)
  WHERE f.tenant_id = $tenant_id AND n.tenant_id = $tenant_id
  RETURN n.id AS id
}
RETURN collect(id) AS ids
