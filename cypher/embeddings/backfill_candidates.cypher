// Up to $limit facts (corrected ones too: they are searched as of earlier times), entities and episodes of the
// tenant that still lack an embedding; never an episode search does not return (`searchable: false`, the record of
// an API write): its vector would never be read. Nothing past retention at $now, which no read shows and the
// sweeper removes, is sent to the embedder: no fact past its retain_until, no episode past its own retain_until or
// of a session past its retention (as jobs/claim).
CALL () {
  MATCH (f:Fact {tenant_id: $tenant_id}) WHERE f.embedding IS NULL
    AND (f.retain_until IS NULL OR f.retain_until > $now)
  RETURN 'fact' AS kind, f.id AS id, f.statement AS text LIMIT $limit
  UNION ALL
  MATCH (e:Entity {tenant_id: $tenant_id}) WHERE e.embedding IS NULL
  RETURN 'entity' AS kind, e.id AS id, e.search_text AS text LIMIT $limit
  UNION ALL
  MATCH (e:Episode {tenant_id: $tenant_id}) WHERE e.embedding IS NULL AND e.searchable IS NULL
    AND (e.retain_until IS NULL OR e.retain_until > $now)
    AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
  RETURN 'episode' AS kind, e.id AS id, coalesce(e.speaker + ': ', '') + e.content AS text LIMIT $limit
}
RETURN kind, id, text
