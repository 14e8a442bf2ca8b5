// Benchmark loader only (bench/recall.py): create synthetic entities of one tenant with their name aliases,
// the same shape entities/create_batch writes. $rows: [{id, kind, name, name_key, search_terms}]
UNWIND $rows AS r
CREATE (e:Entity {id: r.id, tenant_id: $tenant_id, tenant_token: $tenant_token, kind: r.kind, name: r.name, name_key: r.name_key, aliases: [],
                  external_ids: [], search_text: r.name, search_terms: r.search_terms, created_at: $now, updated_at: $now})
SET e:$(r.kind)
CREATE (:Alias {tenant_id: $tenant_id, key: r.kind + ':' + r.name_key, name_key: r.name_key, entity_id: r.id})-[:ALIAS_OF]->(e)
