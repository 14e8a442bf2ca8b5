// Session and user of episodes (to decide whether a preference learned there may cross into this session).
MATCH (e:Episode)
WHERE e.tenant_id = $tenant_id AND e.id IN $ids
RETURN e.id AS id, e.session_id AS session_id, e.user_id AS user_id
