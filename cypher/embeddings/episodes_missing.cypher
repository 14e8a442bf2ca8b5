// Episodes among $ids without an embedding (text: speaker and content).
UNWIND $ids AS id
MATCH (e:Episode {id: id})
WHERE e.tenant_id = $tenant_id AND e.embedding IS NULL
RETURN e.id AS id, coalesce(e.speaker + ': ', '') + e.content AS text
