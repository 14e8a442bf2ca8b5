// Resolve entity references: by strong identifier (email, then external ids, then domain), else by name/alias within
// the kind unless the named entity carries a different email or domain than the reference (then it is somebody else).
// $refs: [{idx, email, domain, external_keys: [..], alias_key}]. One record: rows = [{idx, named, match}] in $refs
// order, where `match` is the chosen entity as a brief map (id, kind, name and what enrichment compares: email,
// domain, aliases, external_ids, summary) or null, and `named` says whether the name alias is taken (by anybody).
// A single record with a list: the driver decodes it far faster than one record per reference.
UNWIND $refs AS r
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, email: r.email})
  RETURN e AS by_email
}
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, domain: r.domain})
  RETURN e AS by_domain
}
CALL (r) {
  UNWIND r.external_keys AS k
  MATCH (:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(e:Entity)
  RETURN collect(DISTINCT e)[0] AS by_external
}
CALL (r) {
  OPTIONAL MATCH (:Alias {tenant_id: $tenant_id, key: r.alias_key})-[:ALIAS_OF]->(e:Entity)
  RETURN e AS by_name
}
WITH r, by_name, coalesce(by_email, by_external, by_domain,
     CASE WHEN by_name IS NOT NULL AND NOT coalesce(r.email <> by_name.email, false)
               AND NOT coalesce(r.domain <> by_name.domain, false) THEN by_name END) AS m
RETURN collect({idx: r.idx, named: by_name IS NOT NULL,
                match: m {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary}}) AS rows
