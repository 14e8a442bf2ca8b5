// The tenant's pin key definitions, by key, paginated.
MATCH (d:PinKeyDef {tenant_id: $tenant_id})
RETURN d {.*} AS definition
ORDER BY d.key
SKIP $offset LIMIT $limit
