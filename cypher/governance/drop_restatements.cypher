// Remove the restatements (facts/set_restatements) that episodes $episode_ids made from the facts $ids that stay
// (erasure or expiry of those episodes): no id of a deleted episode stays on a fact, and its word is not asserted
// again when the fact is cut later. The lists are read whole before any is set (index by index).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})
WHERE f.tenant_id = $tenant_id AND any(b IN coalesce(f.restated_by, []) WHERE b IN $episode_ids)
WITH f, [i IN range(0, size(f.restated_by) - 1) WHERE NOT f.restated_by[i] IN $episode_ids] AS keep
WITH f, [i IN keep | f.restated_from[i]] AS froms, [i IN keep | f.restated_by[i]] AS bys,
     [i IN keep | f.restated_source[i]] AS sources, [i IN keep | f.restated_confidence[i]] AS confidences,
     [i IN keep | coalesce(f.restated_to, f.restated_from)[i]] AS tos
SET f.restated_from = froms, f.restated_by = bys, f.restated_source = sources, f.restated_confidence = confidences,
    f.restated_to = tos
RETURN count(f) AS dropped
