// Before episodes $episode_ids expire: each fact they support keeps living under its own TTL; record how many
// of its source episodes (each once, whatever roles its edges have) retention removed (shown to users in place of the gone provenance).
UNWIND $episode_ids AS eid
MATCH (e:Episode {id: eid})<-[:DERIVED_FROM]-(f:Fact)
WHERE e.tenant_id = $tenant_id AND f.tenant_id = $tenant_id
WITH f, count(DISTINCT e) AS n
SET f.expired_source_count = coalesce(f.expired_source_count, 0) + n
RETURN count(f) AS noted
