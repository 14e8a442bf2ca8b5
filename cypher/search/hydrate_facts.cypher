// Search, phase two: the facts $ids (the few that won fusion) as hits show them: the fact, its subject and object
// names, and its provenance episodes still inside retention at $now (ids and occurred_at). Temporal values come
// back as ISO-8601 strings (toString): the Python driver hydrates a DateTime in ~50-100 µs, pydantic parses the
// string in ~1 µs. One row per id found in this tenant, in no particular order.
UNWIND $ids AS fact_id
MATCH (f:Fact {id: fact_id})-[:SUBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id
OPTIONAL MATCH (f)-[:OBJECT]->(o:Entity)
WITH f, s, o, [(f)-[:DERIVED_FROM]->(e:Episode)
               WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now) | e] AS eps
RETURN f {.id, .tenant_id, .predicate, .value, .object_key, .statement, .confidence, .source, .fact_class, .status,
          subject_id: s.id, object_id: o.id,
          valid_from: toString(f.valid_from), valid_to: toString(f.valid_to), recorded_at: toString(f.recorded_at),
          closed_at: toString(f.closed_at), expired_at: toString(f.expired_at),
          last_confirmed_at: toString(f.last_confirmed_at), retain_until: toString(f.retain_until)} AS fact,
       s.name AS subject_name, o.name AS object_name,
       [e IN eps | e.id] AS episode_ids, [e IN eps | toString(e.occurred_at)] AS episode_times
