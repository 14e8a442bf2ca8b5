// Take the write lock of the subject entity of each fact in $ids (in id order, as facts/lock_subjects does), so
// erasures touching one timeline run one after the other: each reads the supersession neighbourhood the other
// left (two erasures of one timeline at once repaired it from stale reads, or linked a fact the other deleted).
// A fact of a predicate in $symmetric (KNOWS) locks its object too: the pair's timeline is read from both ends
// (governance/supersession_around), as graphmem.store.facts locks both ends to assert one.
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})-[r:SUBJECT|OBJECT]->(s:Entity)
WHERE f.tenant_id = $tenant_id AND s.tenant_id = $tenant_id AND (type(r) = 'SUBJECT' OR f.predicate IN $symmetric)
WITH DISTINCT s ORDER BY s.id
SET s.fact_seq = coalesce(s.fact_seq, 0) + 1
RETURN count(s) AS locked
