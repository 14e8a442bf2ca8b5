// What an erasure covers: the sessions ($session_id, or every session of $user_id) and the episodes (of those
// sessions, of $user_id, and $episode_ids). Parameters not used are null / [].
CALL () {
  OPTIONAL MATCH (s:Session {tenant_id: $tenant_id})
  WHERE ($user_id IS NOT NULL AND s.user_id = $user_id) OR s.id = $session_id
  RETURN collect(s.id) AS sessions
}
CALL (sessions) {
  OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id})
  WHERE e.id IN $episode_ids OR e.session_id IN sessions OR e.session_id = $session_id
     OR ($user_id IS NOT NULL AND e.user_id = $user_id)
  RETURN collect(e.id) AS episodes
}
RETURN sessions, episodes
