// After an erasure: entities whose name only erased episodes declared take the name graphmem.governance.erasure
// chose ($rows; docs/governance.md "Erasure: forget", step 8). The old name's Alias no longer leads to the entity
// (the node goes unless another entity, a namesake, is linked from it, which then owns it). The new name's Alias
// (r.alias_key) is the entity's: the alias it was, or one MERGEd for a name taken from an external id, email,
// domain or placeholder (ON CREATE owned by the entity; one another entity owns links it as a namesake). The
// episodes that declared what the name came from (r.source: 'alias', 'external_id', 'email', 'domain' or
// 'placeholder'; r.source_key the Alias's or ExternalId's key) now declare the name; an alias's own declarations
// go with its becoming the name. Search text, terms and embedding: governance/reindex_entities, after this.
// $rows: [{id, name, name_key, alias_key, old_alias_key, source, source_key}]
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
CALL (r, e) {
  MATCH (old:Alias {tenant_id: $tenant_id, key: r.old_alias_key})-[l:ALIAS_OF]->(e)
  WHERE r.old_alias_key <> r.alias_key
  DELETE l
  WITH old WHERE old.entity_id = e.id
  CALL (old) {
    OPTIONAL MATCH (old)-[:ALIAS_OF]->(o:Entity)
    WHERE o.tenant_id = $tenant_id
    WITH old, o ORDER BY o.created_at, o.id
    WITH old, collect(o.id) AS others
    SET old.entity_id = coalesce(others[0], old.entity_id)
    FOREACH (_ IN CASE WHEN size(others) = 0 THEN [1] ELSE [] END | DETACH DELETE old)
  }
}
CALL (r, e) {
  CALL (r, e) {
    WITH r, e WHERE r.source = 'alias'
    MATCH (ep:Episode)-[d:DECLARED]->(a:Alias {tenant_id: $tenant_id, key: r.source_key})-[:ALIAS_OF]->(e)
    WHERE ep.tenant_id = $tenant_id
    DELETE d
    RETURN ep
    UNION
    WITH r, e WHERE r.source = 'external_id'
    MATCH (ep:Episode)-[:DECLARED]->(:ExternalId {tenant_id: $tenant_id, key: r.source_key})-[:IDENTIFIES]->(e)
    WHERE ep.tenant_id = $tenant_id
    RETURN ep
    UNION
    WITH r, e WHERE r.source IN ['email', 'domain']
    MATCH (ep:Episode)-[d:DECLARED]->(e)
    WHERE ep.tenant_id = $tenant_id AND d.attr = r.source
    RETURN ep
  }
  MERGE (ep)-[:DECLARED {attr: 'name'}]->(e)
}
MERGE (a:Alias {tenant_id: $tenant_id, key: r.alias_key})
  ON CREATE SET a.entity_id = e.id, a.name_key = r.name_key
MERGE (a)-[:ALIAS_OF]->(e)
SET e.name = r.name, e.name_key = r.name_key, e.updated_at = $now
RETURN count(e) AS renamed
