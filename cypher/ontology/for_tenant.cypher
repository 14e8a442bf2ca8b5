// What a tenant adds to the shipped ontology, in one round trip: its own predicates and its fact-class TTL
// overrides (JSON, from the governance retention settings; null when none).
OPTIONAL MATCH (s:TenantSettings {tenant_id: $tenant_id})
CALL () {
  OPTIONAL MATCH (p:Predicate {tenant_id: $tenant_id})
  WITH p ORDER BY p.name
  RETURN collect(p {.*}) AS predicates
}
RETURN predicates, s.fact_class_ttl_json AS fact_class_ttl_json
