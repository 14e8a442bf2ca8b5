// Start the session's window afresh (TTL expiry) unless it is still live: the lock is taken first so two callers
// cannot both reset. Old turns stay stored; only episodes with seq >= window_from_seq enter the window.
MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
SET s._lock = true
WITH s, s.last_active_at < $idle_before AS expired
FOREACH (_ IN CASE WHEN expired THEN [1] ELSE [] END |
  SET s.window_from_seq = coalesce(s.episode_seq, 0) + 1, s.window_reset_at = $now, s.last_active_at = $now,
      s.version = coalesce(s.version, 0) + 1)
REMOVE s._lock
RETURN s {.*} AS session, expired
