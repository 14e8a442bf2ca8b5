// Tenants that have a key, with key counts (admin), a page of them by tenant id; $only (nullable) limits the list to
// that tenant (the admin of one tenant sees its own only).
// tenant-free: the operator's listing of tenants; exposes only tenant ids and counts
MATCH (k:ApiKey)
WHERE $only IS NULL OR k.tenant_id = $only
RETURN k.tenant_id AS tenant_id, count(k) AS keys, sum(CASE WHEN k.revoked_at IS NULL THEN 1 ELSE 0 END) AS active
ORDER BY tenant_id
SKIP $offset LIMIT $limit
