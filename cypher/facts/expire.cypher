// A correction: graphmem stops believing fact $id (transaction time); its valid time is left as it was.
// Its RELATED edge (see facts/create_batch) follows.
MATCH (f:Fact {id: $id}) WHERE f.tenant_id = $tenant_id
SET f.expired_at = $now, f.status = 'corrected'
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.expired_at = f.expired_at, l.status = f.status
RETURN f.id AS id
