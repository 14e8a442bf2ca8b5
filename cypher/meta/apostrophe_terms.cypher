// Schema migration 8 -> 9: the tenant's searchable nodes whose text holds a curly or modifier-letter apostrophe
// ($marks: graphmem.store.fulltext.APOSTROPHES), whose search_terms were computed before those were folded to the
// straight one. The next $limit of them by id after $after (a cursor, so each node comes once however its terms
// turn out), with the text the terms are made from (a fact's statement, an episode's content, an entity's
// search_text). A node without search_terms (an episode kept out of search) is left alone.
CALL () {
  MATCH (n:Fact {tenant_id: $tenant_id})
  WHERE n.id > $after AND n.search_terms IS NOT NULL AND any(m IN $marks WHERE n.statement CONTAINS m)
  RETURN n, n.statement AS text ORDER BY n.id LIMIT $limit
  UNION ALL
  MATCH (n:Episode {tenant_id: $tenant_id})
  WHERE n.id > $after AND n.search_terms IS NOT NULL AND any(m IN $marks WHERE n.content CONTAINS m)
  RETURN n, n.content AS text ORDER BY n.id LIMIT $limit
  UNION ALL
  MATCH (n:Entity {tenant_id: $tenant_id})
  WHERE n.id > $after AND n.search_terms IS NOT NULL AND any(m IN $marks WHERE n.search_text CONTAINS m)
  RETURN n, n.search_text AS text ORDER BY n.id LIMIT $limit
}
WITH n, text ORDER BY n.id LIMIT $limit
RETURN elementId(n) AS eid, n.id AS id, text
