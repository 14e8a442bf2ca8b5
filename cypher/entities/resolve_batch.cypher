// Candidate matches for entity references, by strong identifier and by name/alias within a kind.
// $refs: [{idx, email, domain, external_keys: [..], alias_key}]. One row per ref; each candidate is a brief map
// (id, kind, name and what resolution compares: email, domain, aliases, external_ids, summary) or null.
UNWIND $refs AS r
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, email: r.email})
  RETURN e {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary} AS by_email
}
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, domain: r.domain})
  RETURN e {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary} AS by_domain
}
CALL (r) {
  UNWIND r.external_keys AS k
  MATCH (:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(e:Entity)
  RETURN collect(DISTINCT e {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary})[0] AS by_external
}
CALL (r) {
  OPTIONAL MATCH (:Alias {tenant_id: $tenant_id, key: r.alias_key})-[:ALIAS_OF]->(e:Entity)
  RETURN e {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary} AS by_name
}
RETURN r.idx AS idx, by_email, by_domain, by_external, by_name
