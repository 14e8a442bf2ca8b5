// Schema migration 4 -> 5: store the search_terms computed by graphmem.store.fulltext. $rows: [{eid, terms}].
// The terms are the node's own text only, so an episode loses any `fact_terms` tail (migration 6 -> 7 adds it back).
UNWIND $rows AS r
MATCH (n) WHERE elementId(n) = r.eid AND n.tenant_id = $tenant_id
SET n.search_terms = r.terms
REMOVE n.fact_terms
RETURN count(n) AS updated
