// Before an append: the episode already stored under the idempotency key (if any), the tenant's episode retention
// (days, null = keep) and whether a legal hold covers this user or session (then the episode gets no retain_until).
OPTIONAL MATCH (seen:Episode {tenant_id: $tenant_id, idempotency_key: $idempotency_key})
OPTIONAL MATCH (s:TenantSettings {tenant_id: $tenant_id})
OPTIONAL MATCH (h:LegalHold {tenant_id: $tenant_id})
  WHERE (h.target_kind = 'user' AND h.target_id = $user_id) OR (h.target_kind = 'session' AND h.target_id = $session_id)
RETURN seen {.*, embedding: null} AS episode, s.episode_retention_days AS days, count(h) > 0 AS held
