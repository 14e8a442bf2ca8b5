// Delete the Session nodes $ids.
MATCH (s:Session {tenant_id: $tenant_id})
WHERE s.id IN $ids
DETACH DELETE s
RETURN count(*) AS deleted
