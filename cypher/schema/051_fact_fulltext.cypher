// Full-text (Lucene BM25) over Fact.search_terms - the words of its statement, each prefixed with its tenant's
// prefix (graphmem.store.fulltext), so a query reads only its tenant's postings - plus tenant_token, which every
// query also requires ("+tenant_token:tnt... +search_terms:(t<digits>_word ...)").
// The 'english' analyzer (Lucene EnglishAnalyzer: stop words, possessives, Porter stemming) measured +3 points of
// LoCoMo recall@10 over the default analyzer (docs/benchmarks/locomo_search.md).
// tenant-free: schema statement
CREATE FULLTEXT INDEX fact_text IF NOT EXISTS FOR (n:Fact) ON EACH [n.search_terms, n.tenant_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
