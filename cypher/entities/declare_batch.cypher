// Record which episodes declared which attributes of entities (erasure strips an attribute once every episode that
// declared it is erased: docs/governance.md "Erasure: forget", step 8): (:Episode)-[:DECLARED]->(:Alias) for an
// alias the entity owns, (:Episode)-[:DECLARED]->(:ExternalId) for an external id of the entity, and
// (:Episode)-[:DECLARED {attr}]->(:Entity) for its name ('name': the reference named the entity by its own name,
// $rows.name true, and the entity is new, $rows.created, or its name has a declaration already: a name written
// without an episode stays undeclared) and for its email, domain or summary ('email', 'domain', 'summary') when the
// value given is the entity's and this write set it ($rows.fresh) or an episode declared it before (so, as for the
// name, a value written without an episode stays undeclared when an episode repeats it). One edge per episode and attribute (MERGE; an episode's edges go with it).
// $reset_summary: ids of entities whose summary this write replaced: the old text's declarations go first.
// $reset_email: ids of entities whose email this write replaced (a reference by external id with another email):
// the old address's declarations go first, so only the episodes that gave the new one declare it.
// $rows: [{entity_id, episode_id, name (bool), created (bool), fresh: ['email' | 'domain' | 'summary' this write set],
//   alias_keys: [..], external_keys: [..], email, domain, summary}]
CALL () {
  UNWIND $reset_summary AS id
  MATCH (e:Entity {tenant_id: $tenant_id, id: id})<-[d:DECLARED {attr: 'summary'}]-(:Episode)
  DELETE d
}
CALL () {
  UNWIND $reset_email AS id
  MATCH (e:Entity {tenant_id: $tenant_id, id: id})<-[d:DECLARED {attr: 'email'}]-(:Episode)
  DELETE d
}
UNWIND $rows AS r
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
MATCH (e:Entity {tenant_id: $tenant_id, id: r.entity_id})
CALL (r, ep, e) {
  UNWIND r.alias_keys AS k
  MATCH (a:Alias {tenant_id: $tenant_id, key: k})-[:ALIAS_OF]->(e)
  WHERE a.entity_id = e.id
  MERGE (ep)-[:DECLARED]->(a)
}
CALL (r, ep, e) {
  UNWIND r.external_keys AS k
  MATCH (x:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(e)
  WHERE x.entity_id = e.id
  MERGE (ep)-[:DECLARED]->(x)
}
CALL (r, ep, e) {
  UNWIND [a IN [{attr: 'name', own: r.name AND (r.created OR EXISTS { MATCH (:Episode)-[n:DECLARED]->(e)
                                                                       WHERE n.attr = 'name' })},
                {attr: 'email', own: r.email = e.email}, {attr: 'domain', own: r.domain = e.domain},
                {attr: 'summary', own: r.summary = e.summary}]
          WHERE a.own AND (a.attr = 'name' OR a.attr IN r.fresh
                           OR EXISTS { MATCH (:Episode)-[d:DECLARED]->(e) WHERE d.attr = a.attr })] AS a
  MERGE (ep)-[:DECLARED {attr: a.attr}]->(e)
}
RETURN count(*) AS rows
