// Recompute facts' retain_until from the effective TTL of their predicate: basis (last_confirmed_at, else
// recorded_at) + days; null when the predicate has no TTL or a held episode supports the fact (a legal hold
// blocks expiry). With $only_stale, only facts whose basis changed since the last stamp (new or re-asserted).
// The fact's RELATED edge (facts/create_batch) gets the same retain_until. $ttls: [{predicate, days (int or null)}]
UNWIND $ttls AS t
MATCH (f:Fact {tenant_id: $tenant_id, predicate: t.predicate})
WITH f, t, coalesce(f.last_confirmed_at, f.recorded_at) AS basis
WHERE NOT $only_stale OR f.retention_basis IS NULL OR f.retention_basis <> basis
WITH f, t, basis, EXISTS { (f)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND e.legal_hold } AS held
SET f.retain_until = CASE WHEN held OR t.days IS NULL THEN null ELSE basis + duration({days: t.days}) END,
    f.retention_basis = basis
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.retain_until = f.retain_until
RETURN count(f) AS stamped
