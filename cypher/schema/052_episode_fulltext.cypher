// Full-text (Lucene BM25) over Episode.content, plus tenant_token so that a query can require its tenant inside
// the index ("+tenant_token:tnt... +content:(...)") instead of over-fetching other tenants' hits.
// The 'english' analyzer (Lucene EnglishAnalyzer: stop words, possessives, Porter stemming) measured +3 points of
// LoCoMo recall@10 over the default analyzer (docs/benchmarks/locomo_search.md).
// tenant-free: schema statement
CREATE FULLTEXT INDEX episode_text IF NOT EXISTS FOR (n:Episode) ON EACH [n.content, n.tenant_token]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
