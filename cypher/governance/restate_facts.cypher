// Facts whose generated statement named an entity an erasure renamed: the statement written again from the new
// names, its full-text terms ($rows, computed by graphmem.governance.erasure with graphmem.store.fulltext), and
// the embedding removed so the worker's backfill embeds the new text (embeddings/backfill_candidates).
// $rows: [{id, statement, search_terms}]
UNWIND $rows AS r
MATCH (f:Fact {tenant_id: $tenant_id, id: r.id})
SET f.statement = r.statement, f.search_terms = r.search_terms
REMOVE f.embedding
RETURN count(f) AS restated
