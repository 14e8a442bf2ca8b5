// After an erasure stripped aliases from entities (governance/strip_attributes): their display names, search text
// and full-text terms rebuilt from what is left ($rows, computed by graphmem.governance.erasure with
// graphmem.store.fulltext), and their embedding removed so the worker's backfill embeds the new text
// (embeddings/backfill_candidates: entities without one).
// $rows: [{id, aliases: [..], search_text, search_terms}]
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
SET e.aliases = r.aliases, e.search_text = r.search_text, e.search_terms = r.search_terms, e.updated_at = $now
REMOVE e.embedding
RETURN count(e) AS updated
