// Those of episodes $ids that the sweeper's episode pass would expire at $now (governance/expired_episodes for named
// episodes): unheld, their retention ended. An episode re-sent under the idempotency key of one past its retention
// expires it first (graphmem.governance.sweeper.Sweeper.expire_episodes), so that the re-send is stored anew.
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id AND e.retain_until <= $now AND NOT coalesce(e.legal_hold, false)
RETURN e.id AS id
ORDER BY e.id
