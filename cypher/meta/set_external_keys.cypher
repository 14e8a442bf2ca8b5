// Schema migrations 20 -> 21 and 22 -> 23: store each external id under the key graphmem.identifiers.trim_blank now
// makes of it (of the user id after 'user:', for 22 -> 23).
// $rows: [{key, new_key}], no two with one new_key (graphmem.store.schema.retrim_external_ids sees to it). When no
// ExternalId has the new key, the node takes it ('renamed'); when one of the same entity has it (the entity was sent
// with both forms), the old node goes and the episodes that declared it declare that one ('merged'); when another
// entity's has it, the old key stays as it is (one entity stored twice, once per form, is not merged here), returned
// in `taken`: [{id, value, owner}]. The entity's `external_ids` list follows, without repeats.
// Returns how many keys were renamed or merged.
UNWIND $rows AS r
MATCH (x:ExternalId {tenant_id: $tenant_id, key: r.key})
OPTIONAL MATCH (y:ExternalId {tenant_id: $tenant_id, key: r.new_key})
WITH r, x, y, CASE WHEN y IS NULL THEN 'renamed' WHEN y.entity_id = x.entity_id THEN 'merged' ELSE 'taken' END AS how
WITH r, x, y, how, CASE WHEN how = 'taken' THEN {id: x.entity_id, value: r.new_key, owner: y.entity_id} END AS taken
OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, id: x.entity_id})
CALL (r, e, how) {
  WITH r, e WHERE how <> 'taken' AND e IS NOT NULL
  SET e.external_ids = reduce(ks = [], k IN [k IN e.external_ids | CASE WHEN k = r.key THEN r.new_key ELSE k END] |
                              CASE WHEN k IN ks THEN ks ELSE ks + k END)
}
CALL (r, x, how) {
  WITH r, x WHERE how = 'renamed'
  SET x.key = r.new_key
}
CALL (x, y, how) {
  WITH x, y WHERE how = 'merged'
  OPTIONAL MATCH (ep:Episode)-[:DECLARED]->(x)
  WITH x, y, [p IN collect(ep) WHERE p.tenant_id = $tenant_id] AS eps
  FOREACH (ep IN eps | MERGE (ep)-[:DECLARED]->(y))
  DETACH DELETE x
}
RETURN sum(CASE WHEN how <> 'taken' THEN 1 ELSE 0 END) AS updated, [t IN collect(taken) WHERE t IS NOT NULL] AS taken
