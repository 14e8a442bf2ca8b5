// Set the reason on episodes whose job ended at intake (e.g. skipped as chatter). $rows: [{id, reason}]
UNWIND $rows AS r
MATCH (e:Episode {id: r.id})
WHERE e.tenant_id = $tenant_id
SET e.extraction_reason = r.reason, e.finished_at = $now
RETURN count(e) AS annotated
