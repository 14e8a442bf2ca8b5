// $rows: [{newer, older}]: the newer value closed (or follows) the older one.
UNWIND $rows AS r
MATCH (n:Fact {id: r.newer}) WHERE n.tenant_id = $tenant_id
MATCH (o:Fact {id: r.older}) WHERE o.tenant_id = $tenant_id
MERGE (n)-[l:SUPERSEDES]->(o)
  ON CREATE SET l.at = $now
RETURN count(l) AS linked
