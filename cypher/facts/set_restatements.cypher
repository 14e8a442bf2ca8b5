// Record the later starts each fact's value was said again from while it held (a duplicate without an end:
// graphmem.temporal.TimelineFact.restated), replacing the fact's lists: restated_from (DATETIME), restated_by
// (episode ids), restated_source, restated_confidence, index by index. When a value arriving late or a stated end
// (or a retraction) cuts the fact before one of them, graphmem.store.facts asserts that value again from there.
// $rows: [{id, from: [ISO 8601], by: [episode id], source: [source], confidence: [float]}]
UNWIND $rows AS r
MATCH (f:Fact {id: r.id}) WHERE f.tenant_id = $tenant_id
SET f.restated_from = [x IN r.from | datetime(x)], f.restated_by = r.by, f.restated_source = r.source,
    f.restated_confidence = r.confidence
RETURN count(f) AS recorded
