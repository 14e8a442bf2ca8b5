// Schema migration 4 -> 5: the tenant's searchable nodes without search_terms, with the text they are made from
// (a fact's statement, an episode's content, an entity's search_text), at most $limit at a time.
CALL () {
  MATCH (n:Fact {tenant_id: $tenant_id}) WHERE n.search_terms IS NULL RETURN n, n.statement AS text
  UNION ALL
  MATCH (n:Episode {tenant_id: $tenant_id}) WHERE n.search_terms IS NULL RETURN n, n.content AS text
  UNION ALL
  MATCH (n:Entity {tenant_id: $tenant_id}) WHERE n.search_terms IS NULL RETURN n, n.search_text AS text
}
WITH n, text LIMIT $limit
RETURN elementId(n) AS eid, coalesce(text, '') AS text
