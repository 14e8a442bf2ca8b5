// A correction: graphmem stops believing fact $id (transaction time); its valid time is left as it was.
MATCH (f:Fact {id: $id}) WHERE f.tenant_id = $tenant_id
SET f.expired_at = $now, f.status = 'corrected'
RETURN f.id AS id
