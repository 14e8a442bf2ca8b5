// Create entities. A row with claim_alias = true first MERGEs its name alias; if another writer already
// owns that alias the row creates nothing and resolves to the owner (race-free through alias_key_unique), unless
// the owner is somebody else (another email or domain, or another id of an external system the row has an id of:
// two namesakes written at once), when it is created as a row with claim_alias = false is.
// A row with claim_alias = false (its name alias belongs to somebody else with other identifiers) is also
// linked from that alias, so name lookups find both.
// $rows: [{id, kind, name, name_key, alias_key, claim_alias, email, domain, summary, search_text, search_terms,
//          external_keys, systems}]
// Returns only the rows that lost their alias, or their identifiers, to another writer: {requested_id, id (the owner)}.
UNWIND $rows AS r
CALL (r) {
  WITH r WHERE r.claim_alias
  MERGE (a:Alias {tenant_id: $tenant_id, key: r.alias_key})
    ON CREATE SET a.entity_id = r.id, a.name_key = r.name_key
  RETURN a, a.entity_id AS owner
  UNION
  WITH r WHERE NOT r.claim_alias
  OPTIONAL MATCH (a:Alias {tenant_id: $tenant_id, key: r.alias_key})
  RETURN a, r.id AS owner
}
OPTIONAL MATCH (o:Entity {tenant_id: $tenant_id, id: owner}) WHERE owner <> r.id
WITH r, a, CASE WHEN o IS NOT NULL AND (coalesce(r.email <> o.email, false) OR coalesce(r.domain <> o.domain, false)
                     OR (any(x IN o.external_ids WHERE x CONTAINS ':'
                             AND left(x, size(x) - size(last(split(x, ':'))) - 1) IN r.systems)
                         AND none(x IN r.external_keys WHERE x IN o.external_ids)))
                THEN r.id ELSE owner END AS owner
// A row created beside the name's owner took no lock on the name, so two writers of one new namesake would both
// create it: lock the alias, then look again for an entity with the row's email, domain or an external id, which a
// writer that held the lock may have committed meanwhile (Neo4j reads committed data): that one is the row's entity.
CALL (r, a, owner) {
  WITH r, a, owner WHERE owner = r.id AND a IS NOT NULL AND a.entity_id <> r.id
  SET a.locked_at = $now
  WITH r
  CALL (r) {
    MATCH (x:Entity {tenant_id: $tenant_id, email: r.email}) RETURN x.id AS found
    UNION
    MATCH (x:Entity {tenant_id: $tenant_id, domain: r.domain}) RETURN x.id AS found
    UNION
    UNWIND r.external_keys AS k
    MATCH (:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(x:Entity)
    RETURN x.id AS found
  }
  RETURN min(found) AS found
}
WITH r, a, coalesce(found, owner) AS owner
CALL (r, a, owner) {
  WITH r, a, owner WHERE owner = r.id
  CREATE (e:Entity {id: r.id, tenant_id: $tenant_id, tenant_token: $tenant_token, kind: r.kind, name: r.name, name_key: r.name_key,
                    aliases: [], email: r.email, domain: r.domain, external_ids: [], summary: r.summary,
                    search_text: r.search_text, search_terms: r.search_terms, created_at: $now, updated_at: $now})
  SET e:$(r.kind)
  FOREACH (_ IN CASE WHEN a IS NULL THEN [] ELSE [1] END | CREATE (a)-[:ALIAS_OF]->(e))
}
WITH r, owner WHERE owner <> r.id
RETURN r.id AS requested_id, owner AS id
