// Search, phase two: read the few hits that won fusion, in one round trip. One row: facts, episodes, entities.
// facts: one map per id in $fact_ids found in this tenant: {fact, episode_ids, episode_times},
//  , `fact` holding the `Fact` model's fields, the episodes being its provenance still inside
//   retention at $now.
// episodes: the `Episode` model's fields of each id in $episode_ids (not the job bookkeeping).
// entities: the `Entity` model's fields of each id in $entity_ids.
// Temporal values come back as ISO-8601 strings (toString): the Python driver hydrates a DateTime in ~50-100 µs,
// pydantic parses the string in ~1 µs. Lists are in no particular order. $now is an ISO-8601 string, parsed once.
WITH datetime($now) AS now
CALL (now) {
  UNWIND $fact_ids AS fact_id
  MATCH (f:Fact {id: fact_id})-[:SUBJECT]->(s:Entity)
  WHERE f.tenant_id = $tenant_id
  OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
  WITH f, s, o, [(f)-[:DERIVED_FROM]->(e:Episode)
                 WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > now) | e] AS eps
  RETURN collect({
           fact: f {.id, .tenant_id, .predicate, .value, .object_key, .statement, .confidence, .source, .fact_class,
                    .status, subject_id: s.id, object_id: o.id,
                    valid_from: toString(f.valid_from), valid_to: toString(f.valid_to),
                    recorded_at: toString(f.recorded_at), closed_at: toString(f.closed_at),
                    expired_at: toString(f.expired_at), last_confirmed_at: toString(f.last_confirmed_at),
                    retain_until: toString(f.retain_until)},
           episode_ids: [e IN eps | e.id], episode_times: [e IN eps | toString(e.occurred_at)]}) AS facts
}
CALL () {
  UNWIND $episode_ids AS episode_id
  MATCH (e:Episode {id: episode_id})
  WHERE e.tenant_id = $tenant_id
  RETURN collect(e {.id, .tenant_id, .kind, .content, .session_id, .user_id, .role, .speaker, .idempotency_key,
                    .source, .token_count, .extraction_status, .legal_hold, .agent_version, .prompt_version,
                    .tool_version, occurred_at: toString(e.occurred_at), ingested_at: toString(e.ingested_at),
                    retain_until: toString(e.retain_until)}) AS episodes
}
CALL () {
  UNWIND $entity_ids AS entity_id
  MATCH (n:Entity {id: entity_id})
  WHERE n.tenant_id = $tenant_id
  RETURN collect(n {.id, .tenant_id, .kind, .name, .name_key, .aliases, .email, .domain, .external_ids, .summary,
                    created_at: toString(n.created_at), updated_at: toString(n.updated_at)}) AS entities
}
RETURN facts, episodes, entities
