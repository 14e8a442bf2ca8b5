// Schema migration 6 -> 7: up to $limit episodes that record an API write (intake reason 'explicit facts', content
// "API call ..."; api/routes/facts.py) and are not marked yet become `searchable: false` without full-text terms,
// as graphmem.store.episodes.append stores such records now: search no longer returns them. Returns how many.
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Episode)
WHERE e.extraction_reason = 'explicit facts' AND e.content STARTS WITH 'API call ' AND e.searchable IS NULL
WITH e LIMIT $limit
SET e.searchable = false, e.search_terms = null
RETURN count(e) AS updated
