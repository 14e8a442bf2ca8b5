// Take the write lock of each subject ($ids sorted by the caller, so concurrent batches lock in one order), then
// read the believed facts (not corrected, not candidates, not past retention at $now: gone to every read, so to the
// write too, which then decides as after the sweep) of each (subject, predicate) pair in $pairs, with their
// outgoing SUPERSEDES links. One round trip for what lock_subjects + timelines do; the count(*) barrier makes every
// lock be taken before any timeline is read. One record, facts = [{subject_id, predicate, id, object_key,
// valid_from_us, valid_to_us, confidence, source, status, value_retraction, retraction_to_us, supersedes}]: times as
// integer microseconds since the epoch; restated = [from_us, episode_id, source, confidence, to_us] lists of the
// later starts its value was said again from and the end each gave, or null (facts/set_restatements);
// stated_to_us the end the fact's statements gave it (stated_valid_to, facts/create_batch, facts/close_batch); retraction_to_us is the end a retraction of the whole predicate gave a fact
// that was closed earlier since (facts/close_batch keeps it as retraction_valid_to), else null
// (UTC) and one list instead of a record per fact, both far cheaper for the driver to decode. clears =
// [{subject_id, predicate, at_us}]: the recorded clears of each pair (facts/record_clear, side 'subject').
UNWIND $ids AS id
MATCH (s:Entity {id: id})
WHERE s.tenant_id = $tenant_id
SET s.fact_seq = coalesce(s.fact_seq, 0) + 1
WITH count(*) AS locked
UNWIND $pairs AS p
MATCH (s:Entity {id: p.subject_id})<-[:SUBJECT]-(f:Fact {predicate: p.predicate})
WHERE s.tenant_id = $tenant_id AND f.tenant_id = $tenant_id AND f.expired_at IS NULL AND f.status <> 'candidate'
  AND (f.retain_until IS NULL OR f.retain_until > $now)
OPTIONAL MATCH (f)-[:SUPERSEDES]->(older:Fact)
WITH p, f, collect(older.id) AS supersedes
WITH collect({subject_id: p.subject_id, predicate: p.predicate, id: f.id, object_key: f.object_key,
                valid_from_us: f.valid_from.epochSeconds * 1000000 + f.valid_from.microsecond,
                valid_to_us: f.valid_to.epochSeconds * 1000000 + f.valid_to.microsecond,
                confidence: f.confidence, source: f.source, status: f.status,
                value_retraction: coalesce(f.value_retraction, false),
                stated_to_us: f.stated_valid_to.epochSeconds * 1000000 + f.stated_valid_to.microsecond,
                retraction_to_us: CASE WHEN NOT coalesce(f.retraction_value, false)
                                       THEN f.retraction_valid_to.epochSeconds * 1000000
                                            + f.retraction_valid_to.microsecond END,
                restated: [i IN range(0, size(coalesce(f.restated_from, [])) - 1) |
                           [f.restated_from[i].epochSeconds * 1000000 + f.restated_from[i].microsecond,
                            f.restated_by[i], f.restated_source[i], f.restated_confidence[i],
                            CASE WHEN f.restated_to[i] <> f.restated_from[i]
                                 THEN f.restated_to[i].epochSeconds * 1000000 + f.restated_to[i].microsecond END]],
                supersedes: supersedes}) AS facts
CALL () {
  UNWIND $pairs AS p
  MATCH (s:Entity {id: p.subject_id})-[c:CLEARED {predicate: p.predicate, side: 'subject'}]->(ep:Episode)
  WHERE s.tenant_id = $tenant_id AND ep.tenant_id = $tenant_id
  RETURN collect({subject_id: p.subject_id, predicate: p.predicate,
                  at_us: c.at.epochSeconds * 1000000 + c.at.microsecond}) AS clears
}
RETURN facts, clears
