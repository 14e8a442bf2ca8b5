// Close facts in valid time (and their RELATED edge, see facts/create_batch). Transaction time: closed_at is when
// graphmem first learned the fact had ended; closing an already closed fact again at another valid_to (history that
// arrived out of order lands inside it, or a retraction) keeps closed_at and records the end (and status) believed
// until now as prior_valid_to (prior_status), replaced at reclosed_at, so "valid at as_of as known at known_at" still sees the earlier end before reclosed_at.
// A retraction that named the fact's object or value marks it `value_retraction` (graphmem.temporal.decide: a
// late value inside that interval is another value, which that retraction did not end); any other close clears it.
// A retracted fact closed again keeps its retraction's end and flag as retraction_valid_to / retraction_value
// through every later close (erasure repair never lets it run past them: graphmem.governance.erasure).
// A row with `stated` (a duplicate's own end: graphmem.temporal) keeps that end as stated_valid_to as well.
// A row's `ended_by` / `ended_to` (the episodes whose assertions stated an end of the fact in this write, and those
// ends) are appended to the fact's lists of them (facts/create_batch; erasure undoes an erased episode's end).
// $rows: [{id, valid_to (DATETIME or ISO 8601 string), status, value_retraction (optional), stated (optional),
// ended_by (optional: [episode id]), ended_to (optional: [ISO 8601 string])}]
UNWIND $rows AS r
MATCH (f:Fact {id: r.id}) WHERE f.tenant_id = $tenant_id
WITH f, r, f.closed_at IS NOT NULL AND f.valid_to IS NOT NULL
             AND (f.valid_to <> datetime(r.valid_to) OR f.status <> r.status) AS again
SET f.prior_valid_to = CASE WHEN again THEN f.valid_to ELSE f.prior_valid_to END,
    f.prior_status = CASE WHEN again THEN f.status ELSE f.prior_status END,
    f.retraction_valid_to = CASE WHEN again AND f.status = 'retracted' THEN f.valid_to
                                 ELSE f.retraction_valid_to END,
    f.retraction_value = CASE WHEN again AND f.status = 'retracted' THEN f.value_retraction
                              ELSE f.retraction_value END,
    f.reclosed_at = CASE WHEN again THEN $now ELSE f.reclosed_at END,
    f.closed_at = coalesce(f.closed_at, $now), f.valid_to = datetime(r.valid_to), f.status = r.status,
    f.value_retraction = CASE WHEN r.value_retraction THEN true END,
    f.stated_valid_to = CASE WHEN r.stated THEN datetime(r.valid_to) ELSE f.stated_valid_to END,
    f.ended_by = coalesce(f.ended_by, []) + coalesce(r.ended_by, []),
    f.ended_to = coalesce(f.ended_to, []) + [x IN coalesce(r.ended_to, []) | datetime(x)]
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.valid_to = f.valid_to, l.closed_at = f.closed_at, l.prior_valid_to = f.prior_valid_to,
    l.reclosed_at = f.reclosed_at, l.status = f.status
RETURN count(f) AS closed
