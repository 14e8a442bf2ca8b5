// A fact asserted again by a stronger source or with a higher confidence takes that belief (and one whose
// stronger provenance was erased takes back what remains: graphmem.governance.erasure)
// (graphmem.temporal: a duplicate's `strengthen`); each assertion's own source and confidence stay on its
// DERIVED_FROM provenance edge.
// $rows: [{id, source, confidence}]
UNWIND $rows AS r
MATCH (f:Fact {id: r.id}) WHERE f.tenant_id = $tenant_id
SET f.source = r.source, f.confidence = r.confidence
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.confidence = f.confidence
RETURN count(f) AS strengthened
