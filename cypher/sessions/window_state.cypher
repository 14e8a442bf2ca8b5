// Everything a window needs from the graph in one round trip: the session, its pins (by key), its current summary
// and its raw tail (episodes since the window start that no active summary covers, newest first, at most $limit,
// and `tail_total`, how many there are);
// expired episodes, and summaries built on them, are left out at once: `doomed` are the revisions the sweeper will
// delete (governance/delete_summaries), those covering an expired episode and every later revision of them (a
// revision COVERS only the turns it newly folds but carries its predecessor's text forward); the turns only a
// doomed revision covers are raw again, as after the sweep. (Consent, which decides whether preferences
// learned in other sessions may enter, is read by the window's search: cypher/search/rank.) Always one row; `session` is
// null (and pins, summaries and tail empty) for an unknown session. Lean on purpose (this runs at the start of
// every turn): only the fields assembly renders or checks, and temporal values as ISO strings (toString), which
// pydantic / datetime.fromisoformat parse far faster than the driver hydrates neo4j.time.DateTime.
// A session past its retention (retain_until: idle longer than the tenant's session_ttl_days, not yet swept) is
// null, as after the sweep: none of its pins, summaries or turns. A pin candidate (compaction's, unconfirmed) whose
// source turn (set_by) is past retention, its own or its session's, is left out, as after the sweep (pins/list).
// Index use: Pin by pin_key_unique (tenant_id, session_id, key), the tail by episode_tenant_session
// (tenant_id, session_id, occurred_at) - hence the IS NOT NULL on key and occurred_at, which every node has. The
// tail's index is a hint: at 1M facts the planner's statistics preferred episode_tenant (every episode of the
// tenant, 10k+ rows, ~29 ms) over the session's own episodes. The doomed revisions are found from the session's own
// expired episodes (the same index seek as the tail), up their COVERS and REVISES edges, not by scanning the
// Episode(retain_until) index (every retained episode of every tenant). Summaries are found through the (tenant_id, session_id)
// index on :Summary (schema/072). $now arrives as an
// ISO-8601 string (the driver packs a datetime parameter in ~40 µs).
WITH datetime($now) AS now
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
WHERE NOT coalesce(s.retain_until <= now, false)
CALL (s, now) {
  OPTIONAL MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id})
  WHERE s IS NOT NULL AND p.key IS NOT NULL
    AND NOT (p.status = 'candidate' AND EXISTS {
          MATCH (c:Episode {tenant_id: $tenant_id, id: p.set_by})
          WHERE c.retain_until <= now
             OR EXISTS { MATCH (cs:Session {tenant_id: $tenant_id, id: c.session_id}) WHERE cs.retain_until <= now } })
  WITH p ORDER BY p.key
  RETURN collect(p {.session_id, .key, .value_type, .value, .attrs, .status, .version, .set_by, .written_by,
                    created_at: toString(p.created_at), updated_at: toString(p.updated_at)}) AS pins
}
CALL (s, now) {
  OPTIONAL MATCH (x:Episode {tenant_id: $tenant_id, session_id: $session_id})
  USING INDEX x:Episode(tenant_id, session_id, occurred_at)
  WHERE s IS NOT NULL AND x.occurred_at IS NOT NULL AND x.retain_until <= now
  OPTIONAL MATCH (m:Summary)-[:REVISES*0..]->(:Summary)-[:COVERS]->(x)
  WHERE m.tenant_id = $tenant_id
  RETURN collect(DISTINCT m.id) AS doomed
}
CALL (s, doomed) {
  OPTIONAL MATCH (m:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})
  WHERE s IS NOT NULL
  WITH m ORDER BY m.rev DESC
  WHERE NOT m.id IN doomed
  WITH m LIMIT 1
  RETURN collect(m {.*, covers_from_at: toString(m.covers_from_at), covers_to_at: toString(m.covers_to_at),
                    created_at: toString(m.created_at)}) AS summaries
}
CALL (s, now, doomed) {
  OPTIONAL MATCH (e:Episode {tenant_id: $tenant_id, session_id: $session_id})
  USING INDEX e:Episode(tenant_id, session_id, occurred_at)
  WHERE s IS NOT NULL AND e.occurred_at IS NOT NULL
    AND coalesce(e.seq, 0) >= coalesce(s.window_from_seq, 0)
    AND NOT coalesce(e.retain_until <= now, false)
    AND NOT EXISTS { MATCH (m:Summary {tenant_id: $tenant_id, session_id: $session_id, status: 'active'})-[:COVERS]->(e)
                     WHERE NOT m.id IN doomed }
  WITH e ORDER BY e.occurred_at DESC, e.seq DESC
  WITH collect(e) AS raw
  RETURN [e IN raw[..$limit] | e {.id, .kind, .role, .speaker, .content, .source,
                                  occurred_at: toString(e.occurred_at)}] AS tail, size(raw) AS tail_total
}
RETURN s {.id, .user_id, .agent_id, .version, .window_from_seq, created_at: toString(s.created_at),
          last_active_at: toString(s.last_active_at), window_reset_at: toString(s.window_reset_at)} AS session,
       pins, summaries, tail, tail_total
