// Schema migrations 11 -> 12 and 13 -> 14: store the keys graphmem.identifiers.name_key now makes of the names found.
// $rows: [{id, name_key, add: [{key, name_key}], drop: [key]}]: the entity's name_key; the alias keys of its names
// (MERGEd and linked, as entities/create_batch and enrich_batch make them); the keys its names had before, which no
// name of it has now: their links to it go, an alias left linked to nothing goes, and one it owned passes to an
// entity still linked. Returns how many entities were updated, and `namesakes`: [{id, owner}] for each alias key
// added to an entity that another entity already owns (two entities whose names now key alike: namesakes, which a
// name alone no longer tells apart).
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
SET e.name_key = r.name_key
WITH r, e
CALL (r, e) {
  UNWIND r.add AS al
  MERGE (a:Alias {tenant_id: $tenant_id, key: al.key})
    ON CREATE SET a.entity_id = e.id, a.name_key = al.name_key
  MERGE (a)-[:ALIAS_OF]->(e)
  RETURN collect(CASE WHEN a.entity_id <> e.id THEN a.entity_id END) AS owners
}
CALL (r, e) {
  UNWIND r.drop AS k
  MATCH (a:Alias {tenant_id: $tenant_id, key: k})-[l:ALIAS_OF]->(e)
  DELETE l
  WITH a
  OPTIONAL MATCH (a)-[:ALIAS_OF]->(o:Entity)
  WITH a, collect(o.id) AS others
  FOREACH (_ IN CASE WHEN size(others) > 0 AND a.entity_id = e.id THEN [1] ELSE [] END |
    SET a.entity_id = others[0])
  FOREACH (_ IN CASE WHEN size(others) = 0 THEN [1] ELSE [] END | DETACH DELETE a)
}
RETURN count(e) AS updated,
       [x IN collect({id: e.id, owners: owners}) WHERE size(x.owners) > 0 | {id: x.id, owner: x.owners[0]}] AS namesakes
