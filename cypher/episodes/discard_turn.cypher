// Take back the episodes $ids that a refused try of a turn wrote to session $session_id (a concurrent try under the
// turn's key with another body committed the turn first): under the session's write lock, each episode no fact
// cites yet is deleted with its write-policy refusals, and the session's NEXT chain is linked again around them (in
// occurred_at, seq order, as episodes/append orders it). Returns the count deleted.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
SET s._lock = true
WITH s
CALL (s) {
  MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
  WHERE e.id IN $ids AND NOT EXISTS { (e)<-[:DERIVED_FROM]-(:Fact) }
  OPTIONAL MATCH (r:Refusal {tenant_id: $tenant_id}) WHERE r.episode_id = e.id
  DETACH DELETE r, e
  RETURN count(DISTINCT e) AS deleted
}
CALL (s) {
  MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
  WITH e ORDER BY e.occurred_at, e.seq
  WITH collect(e) AS chain
  UNWIND range(0, size(chain) - 2) AS i
  WITH chain[i] AS a, chain[i + 1] AS b
  MERGE (a)-[:NEXT]->(b)
  RETURN count(*) AS links
}
REMOVE s._lock
RETURN deleted
