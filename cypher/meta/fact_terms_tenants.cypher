// Every tenant id with an episode that asserts a fact but has no `fact_terms` yet (schema migration 6 -> 7 adds the
// facts' terms to their episodes' full-text terms per tenant: meta/fact_terms_missing, episodes/refresh_fact_terms).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (e:Episode)<-[:DERIVED_FROM {role: 'assertion'}]-(:Fact)
WHERE e.tenant_id IS NOT NULL AND e.fact_terms IS NULL
RETURN DISTINCT e.tenant_id AS tenant_id
