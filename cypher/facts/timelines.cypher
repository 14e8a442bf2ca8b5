// The believed facts (not corrected, not candidates) of each (subject, predicate) pair, with their
// outgoing SUPERSEDES links. Read under the subject lock.
UNWIND $pairs AS p
MATCH (s:Entity {id: p.subject_id})<-[:SUBJECT]-(f:Fact {predicate: p.predicate})
WHERE s.tenant_id = $tenant_id AND f.tenant_id = $tenant_id AND f.expired_at IS NULL AND f.status <> 'candidate'
OPTIONAL MATCH (f)-[:SUPERSEDES]->(older:Fact)
RETURN p.subject_id AS subject_id, p.predicate AS predicate, f.id AS id, f.object_key AS object_key,
       f.valid_from AS valid_from, f.valid_to AS valid_to, f.confidence AS confidence, f.source AS source,
       f.status AS status, collect(older.id) AS supersedes
