// Episodes by id, within the tenant (provenance checks).
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
RETURN e.id AS id, e.occurred_at AS occurred_at
