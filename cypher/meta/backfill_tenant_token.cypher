// Schema migration 1 -> 2: give the tenant's searchable nodes their tenant_token (see graphmem.store.tenant_token).
CALL () {
  MATCH (n:Fact {tenant_id: $tenant_id}) RETURN n
  UNION ALL
  MATCH (n:Episode {tenant_id: $tenant_id}) RETURN n
  UNION ALL
  MATCH (n:Entity {tenant_id: $tenant_id}) RETURN n
}
WITH n WHERE n.tenant_token IS NULL
SET n.tenant_token = $tenant_token
RETURN count(n) AS updated
