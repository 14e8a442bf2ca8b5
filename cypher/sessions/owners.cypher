// The users that own any of the sessions $ids, within the tenant (a batch append checks them before it writes).
MATCH (s:Session)
WHERE s.tenant_id = $tenant_id AND s.id IN $ids
RETURN s.id AS id, s.user_id AS user_id
