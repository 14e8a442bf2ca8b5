// Full-text (Lucene BM25) over entity names and aliases (search_text = name + aliases).
// tenant-free: schema statement
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (n:Entity) ON EACH [n.search_text]
