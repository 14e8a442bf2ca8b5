// Replace the stated ends of facts that stay after an erasure or expiry of episodes that stated some of them
// (graphmem.governance.erasure.unsay_ends): $rows: [{id, ended_by: [episode id], ended_to: [ISO 8601 string],
// stated_valid_to (ISO 8601 string or null)}], so no id of a deleted episode stays on a fact.
UNWIND $rows AS r
MATCH (f:Fact {id: r.id})
WHERE f.tenant_id = $tenant_id
SET f.ended_by = r.ended_by, f.ended_to = [x IN r.ended_to | datetime(x)],
    f.stated_valid_to = datetime(r.stated_valid_to)
RETURN count(f) AS set
