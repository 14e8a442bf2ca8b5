// Repair the NEXT chains of sessions $session_ids after episodes were removed: consecutive surviving episodes
// (in occurred_at, arrival order, as episodes/append orders them) are linked again.
UNWIND $session_ids AS sid
MATCH (e:Episode {tenant_id: $tenant_id, session_id: sid})
WITH sid, e ORDER BY e.occurred_at, e.seq
WITH sid, collect(e) AS chain
UNWIND range(0, size(chain) - 2) AS i
WITH chain[i] AS a, chain[i + 1] AS b
MERGE (a)-[:NEXT]->(b)
RETURN count(*) AS links
