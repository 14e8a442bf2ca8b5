// Those of episodes $ids that every read treats as past retention at $now (their own retain_until passed, or their
// session's: episodes/get, governance/expired_named_episodes) but that a legal hold keeps from the sweep
// (legal_hold). Their idempotency keys are taken by data kept under the hold: a re-send under one is refused
// (graphmem.store.episodes.refuse_held_expired), neither replayed nor stored anew.
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id AND coalesce(e.legal_hold, false)
  AND (e.retain_until <= $now
       OR EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
RETURN e.idempotency_key AS key
ORDER BY e.idempotency_key
