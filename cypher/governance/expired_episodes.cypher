// Up to $limit unheld episodes whose retention ended at $now.
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE e.retain_until <= $now AND NOT coalesce(e.legal_hold, false)
RETURN e.id AS id
ORDER BY e.retain_until
LIMIT $limit
