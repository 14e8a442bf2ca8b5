// Delete the summaries built on erased content: those covering an episode in $episode_ids or belonging to a
// session in $session_ids, and every later revision that REVISES them (a rolling summary carries its
// predecessor's text forward).
CALL () {
  UNWIND $episode_ids AS eid
  MATCH (s:Summary)-[:COVERS]->(e:Episode {id: eid})
  WHERE s.tenant_id = $tenant_id AND e.tenant_id = $tenant_id
  RETURN s
  UNION
  MATCH (s:Summary {tenant_id: $tenant_id})
  WHERE s.session_id IN $session_ids
  RETURN s
}
MATCH (later:Summary)-[:REVISES*0..]->(s)
WHERE later.tenant_id = $tenant_id
WITH DISTINCT later
DETACH DELETE later
RETURN count(*) AS deleted
