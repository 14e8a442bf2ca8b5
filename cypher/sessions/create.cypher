// Create a session (tenant + id) for a user, or return the existing one unchanged; created says which.
MERGE (s:Session {tenant_id: $tenant_id, id: $session_id})
  ON CREATE SET s.created_at = $now, s.last_active_at = $now, s.user_id = $user_id, s.agent_id = $agent_id,
                s.version = 0, s.episode_seq = 0, s.window_from_seq = 0, s.created_by_call = $call_id
WITH s, s.created_by_call = $call_id AS created
REMOVE s.created_by_call
RETURN s {.*} AS session, created
