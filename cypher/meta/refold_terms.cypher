// Schema migrations 8 -> 9 and 10 -> 11: the tenant's searchable nodes whose text holds a character outside ASCII
// ($pattern matches such text), whose search_terms were computed before graphmem.store.fulltext.words folded curly
// apostrophes (9) and accents, fullwidth letters and ligatures (11); 17 -> 18: those whose text holds a word with an
// inner apostrophe ($pattern is graphmem.store.schema.JOINED), now also indexed without it (graphmem.store.fulltext.
// forms). With the text the terms are made from (a fact's
// statement, an episode's content, an entity's search_text). Read in one pass (Database.stream), in no particular
// order. A node without search_terms (an episode kept out of search) is left alone.
CALL () {
  MATCH (n:Fact {tenant_id: $tenant_id})
  WHERE n.search_terms IS NOT NULL AND n.statement =~ $pattern
  RETURN n, n.statement AS text
  UNION ALL
  MATCH (n:Episode {tenant_id: $tenant_id})
  WHERE n.search_terms IS NOT NULL AND n.content =~ $pattern
  RETURN n, n.content AS text
  UNION ALL
  MATCH (n:Entity {tenant_id: $tenant_id})
  WHERE n.search_terms IS NOT NULL AND n.search_text =~ $pattern
  RETURN n, n.search_text AS text
}
RETURN elementId(n) AS eid, text
