// Schema migration 16 -> 17: attributes written before graphmem recorded who declared them (entities/declare_batch)
// count as declared by every episode that could have: each episode that MENTIONS the entity or that a fact about it
// (as subject or object) was derived from. For entities $ids, each such attribute without any DECLARED edge (an
// alias the entity owns other than its name, an external id, its name, email, domain or summary) gets one from each of
// those episodes (MERGE: safe to re-run). An entity with more than $cap such episodes, or none, gets none: its
// attributes stay whatever is erased (docs/architecture.md). Returns how many edges were created.
UNWIND $ids AS id
MATCH (n:Entity {tenant_id: $tenant_id, id: id})
CALL (n) {
  CALL (n) {
    MATCH (ep:Episode)-[:MENTIONS]->(n)
    WHERE ep.tenant_id = $tenant_id
    RETURN ep
    UNION
    MATCH (ep:Episode)<-[:DERIVED_FROM]-(f:Fact)-[:SUBJECT|OBJECT]->(n)
    WHERE ep.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
    RETURN ep
  }
  WITH ep LIMIT $cap + 1
  RETURN collect(ep) AS eps
}
WITH n, eps WHERE 0 < size(eps) <= $cap
CALL (n, eps) {
  MATCH (a:Alias)-[:ALIAS_OF]->(n)
  WHERE a.tenant_id = $tenant_id AND a.entity_id = n.id AND a.name_key <> n.name_key
    AND NOT EXISTS { (:Episode)-[:DECLARED]->(a) }
  UNWIND eps AS ep
  MERGE (ep)-[:DECLARED]->(a)
  RETURN count(*) AS aliases
}
CALL (n, eps) {
  MATCH (x:ExternalId)-[:IDENTIFIES]->(n)
  WHERE x.tenant_id = $tenant_id AND NOT EXISTS { (:Episode)-[:DECLARED]->(x) }
  UNWIND eps AS ep
  MERGE (ep)-[:DECLARED]->(x)
  RETURN count(*) AS external_ids
}
CALL (n, eps) {
  UNWIND [p IN [{attr: 'name', v: n.name}, {attr: 'email', v: n.email}, {attr: 'domain', v: n.domain},
                {attr: 'summary', v: n.summary}]
          WHERE p.v IS NOT NULL] AS p
  WITH p WHERE NOT EXISTS { MATCH (:Episode)-[d:DECLARED]->(n) WHERE d.attr = p.attr }
  UNWIND eps AS ep
  MERGE (ep)-[:DECLARED {attr: p.attr}]->(n)
  RETURN count(*) AS attrs
}
RETURN sum(aliases + external_ids + attrs) AS created
