// The user's own entity: an entity identified by the external id 'user:<user_id>' (see docs/governance.md).
MATCH (x:ExternalId {tenant_id: $tenant_id, key: $key})-[:IDENTIFIES]->(e:Entity)
WHERE e.tenant_id = $tenant_id
RETURN e.id AS id
