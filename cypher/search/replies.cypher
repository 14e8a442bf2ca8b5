// Replies to questions, for search: for each episode in $ids whose content asks something (has a '?'), the next
// episode of its session (NEXT) by another speaker, if that reply passes the filters search/episodes applies:
// tenant, retention ($now), transaction time ($known_at vs ingested_at), valid time ($as_of) and the scope filters
// ($session_id, $user_id, $occurred_after, $occurred_before). Returns question_id, id, text (speaker-prefixed).
UNWIND $ids AS question_id
MATCH (asked:Episode {id: question_id})-[:NEXT]->(e:Episode)
WHERE asked.tenant_id = $tenant_id AND asked.content CONTAINS '?'
  AND coalesce(e.speaker, '') <> coalesce(asked.speaker, '')
  AND e.tenant_id = $tenant_id
  AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND e.ingested_at <= $known_at
  AND e.occurred_at <= $as_of
  AND ($session_id IS NULL OR e.session_id = $session_id)
  AND ($user_id IS NULL OR e.user_id = $user_id)
  AND ($occurred_after IS NULL OR e.occurred_at >= $occurred_after)
  AND ($occurred_before IS NULL OR e.occurred_at < $occurred_before)
RETURN question_id, e.id AS id, CASE WHEN e.speaker IS NULL THEN e.content ELSE e.speaker + ': ' + e.content END AS text
