// Set each episode's legal_hold flag from the tenant's LegalHold nodes (on a user, a session or an episode).
// Returns the ids whose flag changed.
MATCH (e:Episode {tenant_id: $tenant_id})
WITH e, EXISTS {
  MATCH (h:LegalHold {tenant_id: $tenant_id})
  WHERE (h.target_kind = 'episode' AND h.target_id = e.id)
     OR (h.target_kind = 'session' AND h.target_id = e.session_id)
     OR (h.target_kind = 'user' AND h.target_id = e.user_id)
} AS held
WHERE coalesce(e.legal_hold, false) <> held
SET e.legal_hold = held
RETURN e.id AS id, held
