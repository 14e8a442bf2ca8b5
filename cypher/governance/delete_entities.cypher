// Delete entities $ids with their Alias and ExternalId nodes and embedding. Unless $force, only those left with
// no facts (as subject or object) and no episode mentions.
UNWIND $ids AS nid
MATCH (n:Entity {id: nid})
WHERE n.tenant_id = $tenant_id
  AND ($force OR (NOT EXISTS { (n)<-[:SUBJECT|OBJECT]-(:Fact) } AND NOT EXISTS { (n)<-[:MENTIONS]-(:Episode) }))
CALL (n) {
  OPTIONAL MATCH (a:Alias)-[:ALIAS_OF]->(n)
  WHERE a.tenant_id = $tenant_id
  DETACH DELETE a
  RETURN count(a) AS aliases
}
CALL (n) {
  OPTIONAL MATCH (x:ExternalId)-[:IDENTIFIES]->(n)
  WHERE x.tenant_id = $tenant_id
  DETACH DELETE x
  RETURN count(x) AS external_ids
}
DETACH DELETE n
RETURN count(n) AS entities, sum(aliases) AS aliases, sum(external_ids) AS external_ids
