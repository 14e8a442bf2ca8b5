// The tenant's legal holds, oldest first, paginated.
MATCH (h:LegalHold {tenant_id: $tenant_id})
RETURN h {.*} AS hold
ORDER BY h.created_at, h.id
SKIP $offset LIMIT $limit
