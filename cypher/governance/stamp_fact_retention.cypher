// Recompute facts' retain_until from the effective TTL of their predicate: basis (last_confirmed_at, else
// recorded_at) + days; null when the predicate has no TTL or a held episode supports the fact (a legal hold
// blocks expiry). A fact whose retain_until had passed at $now and that was not asserted again since (its basis is
// the one last stamped, or it was never stamped here: facts/create_batch and add_provenance stamp a write) keeps it:
// it is gone to every read already, as after the sweep, and a longer TTL set since does not bring it back; held, a
// hold placed after its TTL ended keeps it from the sweep (governance/expired_facts), not readable again.
// With $only_stale, only facts whose basis changed since the last stamp (new or re-asserted).
// The fact's RELATED edge (facts/create_batch) gets the same retain_until. $ttls: [{predicate, days (int or null)}]
UNWIND $ttls AS t
MATCH (f:Fact {tenant_id: $tenant_id, predicate: t.predicate})
WITH f, t, coalesce(f.last_confirmed_at, f.recorded_at) AS basis
WHERE NOT $only_stale OR f.retention_basis IS NULL OR f.retention_basis <> basis
WITH f, t, basis, EXISTS { (f)-[:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND e.legal_hold } AS held
SET f.retain_until = CASE WHEN f.retain_until <= $now AND coalesce(f.retention_basis = basis, true)
                            THEN f.retain_until
                          WHEN held OR t.days IS NULL THEN null ELSE basis + duration({days: t.days}) END,
    f.retention_basis = basis
WITH f
OPTIONAL MATCH ()-[l:RELATED {fact_id: f.id}]->()
SET l.retain_until = f.retain_until
RETURN count(f) AS stamped
