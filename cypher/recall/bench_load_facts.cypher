// Benchmark loader only (bench/recall.py): synthetic facts of one tenant with SUBJECT, OBJECT and DERIVED_FROM
// edges (and RELATED between subject and object entities, and the episode's MENTIONS of both), the same shape facts/create_batch writes. $rows: [{id, predicate, subject_id, object_id, value, statement,
// search_terms, valid_from, episode_id}]
UNWIND $rows AS r
MATCH (s:Entity {id: r.subject_id}) WHERE s.tenant_id = $tenant_id
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
OPTIONAL MATCH (o:Entity {id: r.object_id}) WHERE o.tenant_id = $tenant_id
CREATE (f:Fact {id: r.id, tenant_id: $tenant_id, tenant_token: $tenant_token, predicate: r.predicate, value: r.value,
                object_key: coalesce('e:' + r.object_id, 'v:' + r.value), statement: r.statement, search_terms: r.search_terms,
                valid_from: r.valid_from, recorded_at: $now, last_confirmed_at: $now, confidence: 1.0,
                source: 'user_explicit', fact_class: 'relationship', status: 'current'})
CREATE (f)-[:SUBJECT]->(s)
CREATE (f)-[:DERIVED_FROM {recorded_at: $now, confidence: 1.0, source: 'user_explicit', role: 'assertion'}]->(ep)
MERGE (ep)-[ms:MENTIONS]->(s) ON CREATE SET ms.recorded_at = $now
FOREACH (_ IN CASE WHEN o IS NULL THEN [] ELSE [1] END |
  CREATE (f)-[:OBJECT]->(o)
  MERGE (ep)-[mo:MENTIONS]->(o) ON CREATE SET mo.recorded_at = $now
  CREATE (s)-[l:RELATED]->(o)
  SET l = f {.tenant_id, .predicate, .status, .valid_from, .valid_to, .closed_at, .prior_valid_to, .reclosed_at, .recorded_at, .expired_at, .retain_until, .confidence, fact_id: f.id})
