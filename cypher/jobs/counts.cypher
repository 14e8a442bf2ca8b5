// How many of the tenant's extraction jobs are in each state.
MATCH (e:Episode {tenant_id: $tenant_id})
RETURN e.extraction_status AS status, count(e) AS jobs
