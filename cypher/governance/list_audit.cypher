// The tenant's audit records, newest first, paginated.
MATCH (a:AuditRecord {tenant_id: $tenant_id})
RETURN a {.*} AS record
ORDER BY a.at DESC, a.id
SKIP $offset LIMIT $limit
