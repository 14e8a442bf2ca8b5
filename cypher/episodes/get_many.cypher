// Episodes by id, within the tenant (provenance checks). occurred_us: occurred_at as integer microseconds since
// the epoch (UTC), cheaper for the driver than a DATETIME.
MATCH (e:Episode)
WHERE e.id IN $ids AND e.tenant_id = $tenant_id
RETURN e.id AS id, e.occurred_at.epochSeconds * 1000000 + e.occurred_at.microsecond AS occurred_us
