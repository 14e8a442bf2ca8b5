// Full-text (Lucene BM25) over Entity.search_text, plus tenant_token so that a query can require its tenant inside
// the index ("+tenant_token:tnt... +search_text:(...)") instead of over-fetching other tenants' hits.
// The 'english' analyzer (Lucene EnglishAnalyzer: stop words, possessives, Porter stemming) measured +3 points of
// LoCoMo recall@10 over the default analyzer (docs/benchmarks/locomo_search.md).
// tenant-free: schema statement
CREATE FULLTEXT INDEX entity_text IF NOT EXISTS FOR (n:Entity) ON EACH [n.search_text, n.tenant_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
