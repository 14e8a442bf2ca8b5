// Close facts in valid time (and their RELATED edge, see facts/create_batch). closed_at records when graphmem learned it (transaction time).
// $rows: [{id, valid_to (DATETIME or ISO 8601 string), status}]
UNWIND $rows AS r
MATCH (f:Fact {id: r.id}) WHERE f.tenant_id = $tenant_id
SET f.valid_to = datetime(r.valid_to), f.closed_at = $now, f.status = r.status
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.valid_to = f.valid_to, l.closed_at = f.closed_at, l.status = f.status
RETURN count(f) AS closed
