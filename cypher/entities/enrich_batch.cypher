// Add aliases, strong identifiers and external ids learned about existing entities.
// Aliases already owned by another entity are left with their owner. A domain is only set when empty; so is an
// email, unless `replace_email` (a reference that names the entity by its external id and gives another email:
// the record's own system is the source of its email, graphmem.store.entities.resolve): then it replaces it.
// $rows: [{id, aliases: [{name, key, name_key, terms}], email, replace_email (bool), domain, external_keys: [..],
// summary}]; `terms` are the alias's search_terms (graphmem.store.fulltext), appended to the entity's for the aliases
// it gains.
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
SET e.email = CASE WHEN r.replace_email THEN r.email ELSE coalesce(e.email, r.email) END,
    e.domain = coalesce(e.domain, r.domain),
    e.summary = coalesce(r.summary, e.summary)
WITH r, e
CALL (r, e) {
  UNWIND r.aliases AS al
  MERGE (a:Alias {tenant_id: $tenant_id, key: al.key})
    ON CREATE SET a.entity_id = e.id, a.name_key = al.name_key
  WITH al, a WHERE a.entity_id = e.id
  MERGE (a)-[:ALIAS_OF]->(e)
  RETURN collect(al.name) AS owned
}
CALL (r, e) {
  UNWIND r.external_keys AS k
  MERGE (x:ExternalId {tenant_id: $tenant_id, key: k})
    ON CREATE SET x.entity_id = e.id
  WITH k, x WHERE x.entity_id = e.id
  MERGE (x)-[:IDENTIFIES]->(e)
  RETURN collect(k) AS ext
}
WITH r, e, [n IN owned WHERE NOT n IN e.aliases AND n <> e.name] AS new_aliases,
     [k IN ext WHERE NOT k IN e.external_ids] AS new_ext
SET e.aliases = e.aliases + new_aliases,
    e.external_ids = e.external_ids + new_ext,
    e.search_text = reduce(s = e.name, n IN e.aliases + new_aliases | s + ' | ' + n),
    e.search_terms = reduce(s = coalesce(e.search_terms, ''), al IN r.aliases |
                            CASE WHEN al.name IN new_aliases THEN s + ' ' + al.terms ELSE s END),
    e.updated_at = CASE WHEN size(new_aliases) + size(new_ext) > 0 OR r.replace_email THEN $now ELSE e.updated_at END
RETURN e.id AS id
