// The facts of the tenant that stay (not in $deleted) whose end an episode of $episode_ids stated (ended_by,
// facts/create_batch and facts/close_batch), for graphmem.governance.erasure.unsay_ends: {id, valid_from, valid_to,
// status, stated_valid_to, retraction_valid_to, retraction_value, ended_by, ended_to, next_from}; next_from is the
// earliest start after the fact's of another believed fact (not corrected, candidate or expired) of its subject and
// predicate (of its own object for a predicate not in $single_valued), or null: an end undone stops there.
MATCH (f:Fact)
WHERE f.tenant_id = $tenant_id AND NOT f.id IN $deleted AND any(b IN coalesce(f.ended_by, []) WHERE b IN $episode_ids)
MATCH (f)-[:SUBJECT]->(s:Entity)
OPTIONAL MATCH (s)<-[:SUBJECT]-(g:Fact {predicate: f.predicate})
WHERE g.tenant_id = $tenant_id AND g.id <> f.id AND NOT g.id IN $deleted AND g.expired_at IS NULL
      AND NOT g.status IN ['candidate', 'corrected'] AND g.valid_from > f.valid_from
      AND (f.predicate IN $single_valued OR g.object_key = f.object_key)
WITH f, min(g.valid_from) AS next_from
RETURN f.id AS id, f.valid_from AS valid_from, f.valid_to AS valid_to, f.status AS status,
       f.stated_valid_to AS stated_valid_to, f.retraction_valid_to AS retraction_valid_to,
       f.retraction_value AS retraction_value, f.ended_by AS ended_by, f.ended_to AS ended_to, next_from
ORDER BY id
