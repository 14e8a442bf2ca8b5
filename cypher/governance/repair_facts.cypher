// Supersession repair after an erasure: set a surviving fact's validity end ($rows: [{id, valid_to (ISO 8601 string
// or null), status, value_retraction}]; a null valid_to re-opens it as current; otherwise it is closed, or
// retracted when the erased run ended in a retraction, graphmem.governance.erasure.End), and its RELATED edge
// (facts/create_batch). Transaction time: a fact closed before keeps its closed_at (reads at an earlier known_at
// see it as closed, as it was believed, with the end it would have had without the erased fact); one closed now
// gets closed_at = $now. An end believed earlier (prior_valid_to, facts/close_batch) may have come from the erased
// fact: it goes too.
UNWIND $rows AS r
MATCH (f:Fact {id: r.id})
WHERE f.tenant_id = $tenant_id
SET f.valid_to = datetime(r.valid_to),
    f.status = CASE WHEN r.valid_to IS NULL THEN 'current' ELSE r.status END,
    f.value_retraction = CASE WHEN r.valid_to IS NOT NULL AND r.status = 'retracted' AND r.value_retraction
                              THEN true END,
    f.closed_at = CASE WHEN r.valid_to IS NULL THEN null ELSE coalesce(f.closed_at, $now) END,
    f.prior_valid_to = null, f.reclosed_at = null, f.prior_status = null
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.valid_to = f.valid_to, l.closed_at = f.closed_at, l.prior_valid_to = null, l.reclosed_at = null,
    l.status = f.status
RETURN count(f) AS repaired
