// Document expansion: an episode's full-text terms (`search_terms`, graphmem.store.fulltext) end with the terms of
// the facts asserted from it (DERIVED_FROM role 'assertion'), so search finds an episode by what was learned from
// it as well as by its own words (the expansion of Nogueira et al., "Document Expansion by Query Prediction",
// 2019, with the derived facts as the expansion). `fact_terms` holds that tail, so the episode's own terms are
// `search_terms` without it; this query rebuilds the tail from the facts that exist now. Run after every write
// that adds or removes an assertion edge (graphmem.store.facts: assert_batch, add_provenance, delete).
// $ids: episode ids. Returns how many episodes changed.
UNWIND $ids AS episode_id
MATCH (e:Episode {id: episode_id})
WHERE e.tenant_id = $tenant_id
WITH e, reduce(s = '', terms IN [(e)<-[:DERIVED_FROM {role: 'assertion'}]-(f:Fact)
                                 WHERE f.tenant_id = $tenant_id | coalesce(f.search_terms, '')] | s + ' ' + terms) AS derived
WHERE derived <> coalesce(e.fact_terms, '')
SET e.search_terms = substring(e.search_terms, 0, size(e.search_terms) - size(coalesce(e.fact_terms, ''))) + derived,
    e.fact_terms = derived
RETURN count(e) AS refreshed
