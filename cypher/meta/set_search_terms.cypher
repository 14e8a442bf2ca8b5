// Schema migrations 4 -> 5, 8 -> 9 and 10 -> 11: store the search_terms computed by graphmem.store.fulltext.
// $rows: [{eid, terms}].
UNWIND $rows AS r
MATCH (n) WHERE elementId(n) = r.eid AND n.tenant_id = $tenant_id
SET n.search_terms = r.terms
RETURN count(n) AS updated
