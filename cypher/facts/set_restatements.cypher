// Record the later starts each fact's value was said again from while it held (a duplicate:
// graphmem.temporal.TimelineFact.restated), replacing the fact's lists: restated_from (DATETIME), restated_by
// (episode ids), restated_source, restated_confidence and restated_to (DATETIME: the end the restatement gave, or
// its start when it gave none; a property list holds no null, and a stated end is always after its start), index
// by index. When a value arriving late, a stated end or a retraction cuts the fact before one of them,
// graphmem.store.facts asserts that value again from there (up to its end).
// $rows: [{id, from: [ISO 8601], by: [episode id], source: [source], confidence: [float], to: [ISO 8601]}]
UNWIND $rows AS r
MATCH (f:Fact {id: r.id}) WHERE f.tenant_id = $tenant_id
SET f.restated_from = [x IN r.from | datetime(x)], f.restated_by = r.by, f.restated_source = r.source,
    f.restated_confidence = r.confidence, f.restated_to = [x IN r.to | datetime(x)]
RETURN count(f) AS recorded
