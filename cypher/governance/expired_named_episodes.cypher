// Those of episodes $ids that are past retention at $now as every read treats them (episodes/get,
// episodes/retained): unheld, and their own retain_until passed or their session's (an episode of a session past
// its retain_until is gone with the session). An episode re-sent under the idempotency key of one of them expires
// it first (graphmem.governance.sweeper.Sweeper.expire_episodes), so that the re-send is stored anew.
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id AND NOT coalesce(e.legal_hold, false)
  AND (e.retain_until <= $now
       OR EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
RETURN e.id AS id
ORDER BY e.id
