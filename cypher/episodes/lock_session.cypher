// Create or touch the session and take its write lock for this transaction; returns the next sequence number
// used to order episodes that share an occurred_at.
MERGE (s:Session {tenant_id: $tenant_id, id: $session_id})
  ON CREATE SET s.created_at = $now, s.user_id = $user_id, s.agent_id = $agent_id, s.version = 0, s.episode_seq = 0
SET s.episode_seq = s.episode_seq + 1, s.last_active_at = $now
RETURN s.episode_seq AS seq, s.user_id AS user_id
