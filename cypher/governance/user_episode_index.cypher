// A user's episodes $episode_ids that are still inside retention at $now (the export leaves out expired ones, and
// those of a session past its retention, as every read does), oldest first: id and content size (characters), so
// the export reads them in pages of bounded size (governance/user_episodes).
UNWIND $episode_ids AS eid
MATCH (e:Episode {id: eid})
WHERE e.tenant_id = $tenant_id AND NOT coalesce(e.retain_until <= $now, false)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e.id AS id, size(e.content) AS chars
ORDER BY e.occurred_at, e.seq, e.id
