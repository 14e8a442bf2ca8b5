// Store an episode in one round trip (the single-episode hot path). In order:
// 1. idempotency: an episode already stored under (tenant, $idempotency_key) is returned unchanged (created = false)
//    and nothing else happens;
// 2. the session ($session_id, may be null) is created or touched and its write lock taken before its user is read
//    (concurrent appends to one session serialise); its episode_seq orders episodes that share an occurred_at. A
//    session without a user is claimed by the first episode that has one: the session's user_id is set, and its
//    earlier episodes stored without a user become that user's (claimed = true; two users claiming at once
//    serialise on the lock, the second sees the first as owner). A session that belongs to another user stops here
//    (conflict = true; the caller raises and the transaction rolls back); an episode sent without a user_id is the
//    session owner's (user_id = the session's user: search's user scope, erasure and holds of that user then cover
//    it); the session's retain_until becomes $now + the tenant's session_ttl_days (null without one, or when
//    a legal hold covers the session: its legal_hold flag (governance/stamp_session_retention), or a hold on it or
//    its user), so that reads hide it once it is idle past the session TTL;
// 3. retention: retain_until = $now + the tenant's episode retention days, unless a legal hold covers the user or
//    the session (then none, and legal_hold = true, as the sweeper would flag it);
// 4. the episode is MERGEd on the unique (tenant_id, idempotency_key) (a concurrent writer with the same key makes
//    this a replay); $episode holds its properties except the times, which come as ISO 8601 strings ($occurred_at,
//    $now, $finished_at or null) and are stored as DATETIME;
// 5. a created episode joins its session's NEXT chain at its (occurred_at, seq) position: after the session's tail
//    (last_episode_id) in O(1) when it is at or after it; otherwise (out of order, first episode, or a tail that
//    erasure removed) after the latest episode before it (a scan of the session), and it becomes the tail if
//    nothing follows it.
// Returns created, conflict, retain_days (the days used for retain_until, or null), user_id and held (as stored
// on a created episode) and, for a replay only, the stored episode (a created one is what the caller sent with
// those two: nothing is read back).
OPTIONAL MATCH (seen:Episode {tenant_id: $tenant_id, idempotency_key: $idempotency_key})
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
WITH seen, ts.episode_retention_days AS days, ts.session_ttl_days AS session_days, datetime($now) AS now
CALL (seen, now, session_days) {
  WITH seen, now WHERE seen IS NULL AND $session_id IS NOT NULL
  MERGE (s:Session {tenant_id: $tenant_id, id: $session_id})
    ON CREATE SET s.created_at = now, s.user_id = $user_id, s.agent_id = $agent_id, s.version = 0, s.episode_seq = 0
  SET s._lock = true
  WITH s, now, s.user_id IS NULL AND $user_id IS NOT NULL AS claimed
  SET s.episode_seq = s.episode_seq + 1, s.last_active_at = now, s.user_id = coalesce(s.user_id, $user_id)
  SET s.retain_until = CASE WHEN session_days IS NULL OR coalesce(s.legal_hold, false)
                              OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                              OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                            THEN null ELSE now + duration({days: session_days}) END
  REMOVE s._lock
  RETURN s, claimed
  UNION
  WITH seen WHERE seen IS NOT NULL OR $session_id IS NULL
  RETURN null AS s, false AS claimed
}
CALL (s, claimed) {
  WITH s WHERE claimed
  MATCH (x:Episode {tenant_id: $tenant_id, session_id: $session_id}) WHERE x.occurred_at IS NOT NULL AND x.user_id IS NULL
  SET x.user_id = s.user_id
}
WITH seen, days, now, s, coalesce($user_id, s.user_id) AS user_id,
     coalesce(s.user_id IS NOT NULL AND $user_id IS NOT NULL AND s.user_id <> $user_id, false) AS conflict
WITH seen, days, now, s, user_id, conflict,
     EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: user_id}) } OR
     EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: $session_id}) } AS held
WITH seen, CASE WHEN days > 0 AND NOT held THEN days END AS retain_days, now, s, user_id, conflict, held
CALL (seen, retain_days, now, s, conflict, user_id, held) {
  WITH retain_days, now, s, user_id, held WHERE seen IS NULL AND NOT conflict
  MERGE (e:Episode {tenant_id: $tenant_id, idempotency_key: $idempotency_key})
    ON CREATE SET e += $episode, e.user_id = user_id, e.legal_hold = held,
                  e.occurred_at = datetime($occurred_at), e.ingested_at = now,
                  e.finished_at = datetime($finished_at), e.seq = coalesce(s.episode_seq, 0),
                  e.retain_until = CASE WHEN retain_days IS NOT NULL THEN now + duration({days: retain_days}) END,
                  e.created_by_call = $call_id
  WITH s, e, e.created_by_call = $call_id AS created
  REMOVE e.created_by_call
  RETURN e, created
  UNION
  WITH seen, conflict WHERE seen IS NOT NULL OR conflict
  RETURN seen AS e, false AS created
}
CALL (s, e, created) {
  WITH s, e WHERE created AND s IS NOT NULL
  OPTIONAL MATCH (last:Episode {id: s.last_episode_id}) WHERE last.tenant_id = $tenant_id
  WITH s, e, last, last IS NOT NULL AND last.occurred_at <= e.occurred_at AS at_tail
  CALL (s, e, last, at_tail) {
    WITH last WHERE at_tail
    RETURN last AS p, null AS old, null AS nxt
    UNION
    WITH e, at_tail WHERE NOT at_tail
    OPTIONAL MATCH (p:Episode {tenant_id: $tenant_id, session_id: $session_id})
      WHERE p.id <> e.id AND (p.occurred_at < e.occurred_at OR (p.occurred_at = e.occurred_at AND p.seq < e.seq))
    WITH e, p ORDER BY p.occurred_at DESC, p.seq DESC LIMIT 1
    OPTIONAL MATCH (f:Episode {tenant_id: $tenant_id, session_id: $session_id})
      WHERE p IS NULL AND f.id <> e.id
    WITH p, f ORDER BY f.occurred_at ASC, f.seq ASC LIMIT 1
    OPTIONAL MATCH (p)-[old:NEXT]->(n:Episode)
    RETURN p, old, coalesce(n, f) AS nxt
  }
  DELETE old
  SET s.last_episode_id = CASE WHEN nxt IS NULL THEN e.id ELSE s.last_episode_id END
  FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | CREATE (p)-[:NEXT]->(e))
  FOREACH (_ IN CASE WHEN nxt IS NULL THEN [] ELSE [1] END | CREATE (e)-[:NEXT]->(nxt))
}
RETURN created, conflict, retain_days, user_id, held,
       CASE WHEN created THEN null ELSE e {.*, embedding: null, search_terms: null} END AS episode
