// Place a legal hold on a user, a session or an episode ($target_kind: user | session | episode).
// One hold per target: placing it again returns the existing hold (created = false).
MERGE (h:LegalHold {tenant_id: $tenant_id, target_kind: $target_kind, target_id: $target_id})
  ON CREATE SET h.id = $id, h.reason = $reason, h.created_at = $now
RETURN h {.*} AS hold, h.id = $id AS created
