// The tenant's write-policy refusals, newest first, paginated.
MATCH (x:Refusal {tenant_id: $tenant_id})
RETURN x {.*} AS refusal
ORDER BY x.created_at DESC, x.id
SKIP $offset LIMIT $limit
