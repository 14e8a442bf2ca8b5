// The session's episodes $ids (turns a compaction folds, chosen from sessions/tail), in full, oldest first (as
// sessions/tail orders them). An id that is no longer there (erased meanwhile) or past its retention at $now
// (its own, or its session's) has no row: the compaction then gives up, as for a turn erased while it runs.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WHERE NOT coalesce(s.retain_until <= $now, false)
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.tenant_id = $tenant_id AND e.session_id = $session_id AND NOT coalesce(e.retain_until <= $now, false)
RETURN e {.*, embedding: null, search_terms: null} AS episode
ORDER BY e.occurred_at, e.seq
