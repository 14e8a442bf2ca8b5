// Episodes among $ids without an embedding (text: speaker and content), except those search does not return
// (`searchable: false`, the record of an API write).
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.tenant_id = $tenant_id AND e.embedding IS NULL AND e.searchable IS NULL
RETURN e.id AS id, coalesce(e.speaker + ': ', '') + e.content AS text
