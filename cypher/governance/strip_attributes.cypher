// Strip from entities what only erased episodes declared (governance/declared_only_by). Per row: the entity loses
// the aliases $rows.alias_keys (its ALIAS_OF link; the Alias node goes unless it is another entity's name too, a
// namesake's, which then owns it), the external ids $rows.external_keys (ExternalId nodes and `external_ids`), and
// its email, domain or summary where the row says so. Entities that no longer exist (the cascade deleted them) are
// skipped. Each is checked again once the erased episodes are gone: an attribute some episode still DECLARED (one
// written since governance/declared_only_by read) stays. Returns per entity: id, kind, name, aliases (its display
// names, before governance/reindex_entities rebuilds them), stripped_name_keys (name keys of the aliases it lost),
// aliases_stripped, external_ids_stripped, and for an entity whose name only erased episodes declared ($rows.name)
// `rename` true when no episode declares it now, with what graphmem.governance.erasure renames it from:
// declared_alias_keys (name keys of the aliases it keeps that an episode declared), external_ids, email, domain
// (what it keeps).
// $rows: [{id, name: bool, alias_keys: [..], external_keys: [..], email: bool, domain: bool, summary: bool}]
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
CALL (r, e) {
  UNWIND r.alias_keys AS k
  MATCH (a:Alias {tenant_id: $tenant_id, key: k})-[l:ALIAS_OF]->(e)
  WHERE a.entity_id = e.id AND NOT EXISTS { (:Episode)-[:DECLARED]->(a) }
  DELETE l
  WITH a, a.name_key AS nk
  CALL (a) {
    OPTIONAL MATCH (a)-[:ALIAS_OF]->(o:Entity)
    WHERE o.tenant_id = $tenant_id
    WITH a, o ORDER BY o.created_at, o.id
    WITH a, collect(o.id) AS others
    SET a.entity_id = coalesce(others[0], a.entity_id)
    FOREACH (_ IN CASE WHEN size(others) = 0 THEN [1] ELSE [] END | DETACH DELETE a)
  }
  RETURN collect(nk) AS stripped_name_keys
}
CALL (r, e) {
  UNWIND r.external_keys AS k
  MATCH (x:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(e)
  WHERE x.entity_id = e.id AND NOT EXISTS { (:Episode)-[:DECLARED]->(x) }
  DETACH DELETE x
  RETURN collect(k) AS ext
}
WITH r, e, stripped_name_keys, ext,
     [a IN ['email', 'domain', 'summary'] WHERE r[a] AND NOT EXISTS { MATCH (:Episode)-[d:DECLARED]->(e)
                                                                        WHERE d.attr = a }] AS cleared
SET e.external_ids = [k IN e.external_ids WHERE NOT k IN ext],
    e.email = CASE WHEN 'email' IN cleared THEN null ELSE e.email END,
    e.domain = CASE WHEN 'domain' IN cleared THEN null ELSE e.domain END,
    e.summary = CASE WHEN 'summary' IN cleared THEN null ELSE e.summary END
WITH r, e, stripped_name_keys, ext,
     coalesce(r.name, false) AND NOT EXISTS { MATCH (:Episode)-[d:DECLARED]->(e) WHERE d.attr = 'name' } AS rename
CALL (e, rename) {
  OPTIONAL MATCH (a:Alias)-[:ALIAS_OF]->(e)
  WHERE rename AND a.tenant_id = $tenant_id AND a.entity_id = e.id AND EXISTS { (:Episode)-[:DECLARED]->(a) }
  RETURN collect(a.name_key) AS declared_alias_keys
}
RETURN e.id AS id, e.kind AS kind, e.name AS name, e.aliases AS aliases, stripped_name_keys,
       size(stripped_name_keys) AS aliases_stripped, size(ext) AS external_ids_stripped, rename,
       declared_alias_keys, e.external_ids AS external_ids, e.email AS email, e.domain AS domain
