// Those of episodes $ids that are within retention at $now, as every read shows them (episodes/get): not past their
// own retain_until, nor of a session past its retention (retain_until: idle longer than the tenant's
// session_ttl_days). Compaction asks right before each LLM request carrying the turns it folds.
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now)
  AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now }
RETURN e.id AS id
