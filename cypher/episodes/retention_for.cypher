// The tenant's episode retention (days, null = keep) and whether a legal hold covers this user or session
// (then the episode gets no retain_until: a hold blocks expiry).
OPTIONAL MATCH (s:TenantSettings {tenant_id: $tenant_id})
OPTIONAL MATCH (h:LegalHold {tenant_id: $tenant_id})
  WHERE (h.target_kind = 'user' AND h.target_id = $user_id) OR (h.target_kind = 'session' AND h.target_id = $session_id)
RETURN s.episode_retention_days AS days, s.fact_class_ttl_json AS fact_class_ttl_json, count(h) > 0 AS held
