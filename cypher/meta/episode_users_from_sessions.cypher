// Schema migration 7 -> 8: an episode stored without a user_id in a session that has a user is that user's (as
// episodes/append now stores it), for up to $limit such episodes: search's user scope, erasure and holds of the
// user then cover it. Returns how many episodes were updated.
// tenant-free: migration over every tenant, run once at start-up by apply_schema; the session is the episode's own
// tenant's
MATCH (e:Episode) WHERE e.user_id IS NULL AND e.session_id IS NOT NULL
MATCH (s:Session {tenant_id: e.tenant_id, id: e.session_id}) WHERE s.user_id IS NOT NULL
WITH e, s LIMIT $limit
SET e.user_id = s.user_id
RETURN count(e) AS updated
