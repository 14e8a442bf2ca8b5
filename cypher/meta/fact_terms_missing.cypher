// Schema migration 6 -> 7: up to $limit ids of the tenant's episodes that assert a fact but have no `fact_terms`
// yet (episodes/refresh_fact_terms gives them their facts' terms).
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.fact_terms IS NULL AND EXISTS { (e)<-[:DERIVED_FROM {role: 'assertion'}]-(:Fact) }
RETURN e.id AS id
LIMIT $limit
