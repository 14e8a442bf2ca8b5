// Remove SUPERSEDES links replaced by an out-of-order insertion. $rows: [{newer, older}]
UNWIND $rows AS r
MATCH (n:Fact {id: r.newer})-[l:SUPERSEDES]->(o:Fact {id: r.older})
WHERE n.tenant_id = $tenant_id AND o.tenant_id = $tenant_id
DELETE l
RETURN count(*) AS unlinked
