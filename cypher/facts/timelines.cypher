// The believed facts (not corrected, not candidates, not past retention at $now: gone to every read, as after the
// sweep) of each (subject, predicate) pair, with their
// outgoing SUPERSEDES links. Read under the subject lock. Times as integer microseconds since the epoch (UTC);
// restated: [from_us, episode_id, source, confidence, to_us] lists of the later starts the fact's value was said
// again from and the end each gave, or null (facts/set_restatements), as facts/lock_timelines returns them.
UNWIND $pairs AS p
MATCH (s:Entity {id: p.subject_id})<-[:SUBJECT]-(f:Fact {predicate: p.predicate})
WHERE s.tenant_id = $tenant_id AND f.tenant_id = $tenant_id AND f.expired_at IS NULL AND f.status <> 'candidate'
  AND (f.retain_until IS NULL OR f.retain_until > $now)
OPTIONAL MATCH (f)-[:SUPERSEDES]->(older:Fact)
WITH p, f, collect(older.id) AS supersedes
RETURN p.subject_id AS subject_id, p.predicate AS predicate, f.id AS id, f.object_key AS object_key,
       f.valid_from.epochSeconds * 1000000 + f.valid_from.microsecond AS valid_from_us,
       f.valid_to.epochSeconds * 1000000 + f.valid_to.microsecond AS valid_to_us,
       f.confidence AS confidence, f.source AS source, f.status AS status, supersedes,
       [i IN range(0, size(coalesce(f.restated_from, [])) - 1) |
        [f.restated_from[i].epochSeconds * 1000000 + f.restated_from[i].microsecond,
         f.restated_by[i], f.restated_source[i], f.restated_confidence[i],
         CASE WHEN f.restated_to[i] <> f.restated_from[i]
              THEN f.restated_to[i].epochSeconds * 1000000 + f.restated_to[i].microsecond END]] AS restated
