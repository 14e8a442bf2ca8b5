// A user's facts (see docs/governance.md): facts with provenance in the user's episodes $episode_ids, plus facts
// about the user's own entities $entity_ids. $candidates picks held candidates or the others; facts past
// retention are gone. One row with a null fact when the page is empty. Each with the provenance from the user's episodes (not those past retention
// at $now: their own retain_until, or their session's) and a count of other sources. Paginated.
CALL () {
  UNWIND $episode_ids AS eid
  MATCH (e:Episode {id: eid})<-[:DERIVED_FROM]-(f:Fact)
  WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
  RETURN f
  UNION
  UNWIND $entity_ids AS nid
  MATCH (n:Entity {id: nid})<-[:SUBJECT|OBJECT]-(f:Fact)
  WHERE n.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
  RETURN f
}
WITH f
WHERE ((f.status = 'candidate') = $candidates) AND (f.retain_until IS NULL OR f.retain_until > $now)
  AND ($fact_id IS NULL OR f.id = $fact_id)
WITH f ORDER BY f.recorded_at DESC, f.id
WITH collect(f) AS matched
WITH matched, matched[$offset..$offset + $limit] AS page
UNWIND CASE WHEN size(page) = 0 THEN [null] ELSE page END AS f
OPTIONAL MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
CALL (f) {
  OPTIONAL MATCH (f)-[d:DERIVED_FROM]->(ep:Episode)
  WHERE ep.tenant_id = $tenant_id AND ep.id IN $episode_ids AND (ep.retain_until IS NULL OR ep.retain_until > $now)
    AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: ep.session_id}) WHERE ss.retain_until <= $now }
  WITH d, ep ORDER BY ep.occurred_at
  RETURN [x IN collect({episode_id: ep.id, occurred_at: ep.occurred_at, recorded_at: d.recorded_at,
                        source: d.source, confidence: d.confidence, role: d.role, session_id: ep.session_id,
                        episode_kind: ep.kind}) WHERE x.episode_id IS NOT NULL] AS provenance
}
CALL (f) {
  OPTIONAL MATCH (f)-[d:DERIVED_FROM]->(ep:Episode)
  WHERE NOT ep.id IN $episode_ids AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation']
  RETURN count(DISTINCT ep) AS other_sources
}
RETURN size(matched) AS total, f {.*, embedding: null, search_terms: null, subject_id: s.id, object_id: o.id} AS fact,
       s.name AS subject_name, o.name AS object_name, provenance, other_sources
ORDER BY fact.recorded_at DESC, fact.id
