// Schema migration 12 -> 13: up to $limit episodes that record a user's confirmation or correction of a memory
// (intake reason 'explicit facts', content "User confirmed memory ..." / "User corrected memory ...";
// graphmem.governance.memories) and are not marked yet become `searchable: false` without full-text terms, as
// they are stored now: search no longer returns them. Returns how many.
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Episode)
WHERE e.extraction_reason = 'explicit facts' AND e.searchable IS NULL
  AND (e.content STARTS WITH 'User confirmed memory ' OR e.content STARTS WITH 'User corrected memory ')
WITH e LIMIT $limit
SET e.searchable = false, e.search_terms = null
RETURN count(e) AS updated
