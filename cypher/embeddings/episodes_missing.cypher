// Episodes among $ids without an embedding (text: speaker and content), except those search does not return
// (`searchable: false`, the record of an API write) and those past retention at $now (past their own retain_until,
// or of a session past its retention, as jobs/claim): their content is not sent to the embedder.
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.tenant_id = $tenant_id AND e.embedding IS NULL AND e.searchable IS NULL
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e.id AS id, coalesce(e.speaker + ': ', '') + e.content AS text
