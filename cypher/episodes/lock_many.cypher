// Episodes by id, within the tenant, each write-locked for the rest of the transaction (SET then REMOVE of a marker
// property: Neo4j's lost-update pattern; nothing is stored), in id order so that two lockers never deadlock. A fact
// write locks the episodes it cites before anything else, and so does an erasure or expiry the episodes it deletes:
// a write either commits before the erasure reads what those episodes support, or finds them gone (NotFound),
// never leaves facts, entities or aliases of an erased episode behind it.
// occurred_us: occurred_at as integer microseconds since the epoch (UTC); retained: false for an episode past its
// retention (its retain_until, or its session's: idle past the session TTL) that the sweeper has not removed yet,
// which every read already treats as gone (a fact write must not cite it; an erasure still deletes it).
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
WITH e ORDER BY e.id
SET e._lock = true
REMOVE e._lock
RETURN e.id AS id, e.occurred_at.epochSeconds * 1000000 + e.occurred_at.microsecond AS occurred_us,
       NOT coalesce(e.retain_until <= datetime(), false)
       AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= datetime() }
       AS retained
