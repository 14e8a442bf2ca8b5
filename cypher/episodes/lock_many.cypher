// Episodes by id, within the tenant, each write-locked for the rest of the transaction (SET then REMOVE of a marker
// property: Neo4j's lost-update pattern; nothing is stored), in id order so that two lockers never deadlock. A fact
// write locks the episodes it cites before anything else, and so does an erasure or expiry the episodes it deletes:
// a write either commits before the erasure reads what those episodes support, or finds them gone (NotFound),
// never leaves facts, entities or aliases of an erased episode behind it.
// occurred_us: occurred_at as integer microseconds since the epoch (UTC); retain_until_us and
// session_retain_until_us: when the episode's own retention ends and its session's (idle past the session TTL), in
// the same unit, null for never: past either, every read treats the episode as gone before the sweeper removes it
// (a fact write must not cite it: graphmem.store.facts; an erasure still deletes it).
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
WITH e ORDER BY e.id
SET e._lock = true
REMOVE e._lock
WITH e
OPTIONAL MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id})
RETURN e.id AS id, e.occurred_at.epochSeconds * 1000000 + e.occurred_at.microsecond AS occurred_us,
       e.retain_until.epochSeconds * 1000000 + e.retain_until.microsecond AS retain_until_us,
       ss.retain_until.epochSeconds * 1000000 + ss.retain_until.microsecond AS session_retain_until_us
