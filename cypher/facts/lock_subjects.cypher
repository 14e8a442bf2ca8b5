// Take the write lock of each subject entity for this transaction (ids sorted by the caller, so concurrent
// batches lock in one order). Serialises assertions about the same subject: no two current values of a
// single-valued predicate can be written by parallel writers.
UNWIND $ids AS id
MATCH (s:Entity {id: id})
WHERE s.tenant_id = $tenant_id
SET s.fact_seq = coalesce(s.fact_seq, 0) + 1
RETURN s.id AS id
