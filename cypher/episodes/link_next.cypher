// Insert episode $id into its session's NEXT chain at its (occurred_at, seq) position.
MATCH (e:Episode {tenant_id: $tenant_id, id: $id})
OPTIONAL MATCH (p:Episode {tenant_id: $tenant_id, session_id: e.session_id})
  WHERE p.id <> e.id AND (p.occurred_at < e.occurred_at OR (p.occurred_at = e.occurred_at AND p.seq < e.seq))
WITH e, p ORDER BY p.occurred_at DESC, p.seq DESC LIMIT 1
OPTIONAL MATCH (f:Episode {tenant_id: $tenant_id, session_id: e.session_id})
  WHERE p IS NULL AND f.id <> e.id
WITH e, p, f ORDER BY f.occurred_at ASC, f.seq ASC LIMIT 1
OPTIONAL MATCH (p)-[old:NEXT]->(n:Episode)
WITH e, p, old, coalesce(n, f) AS nxt
DELETE old
FOREACH (_ IN CASE WHEN p IS NULL THEN [] ELSE [1] END | CREATE (p)-[:NEXT]->(e))
FOREACH (_ IN CASE WHEN nxt IS NULL THEN [] ELSE [1] END | CREATE (e)-[:NEXT]->(nxt))
RETURN p.id AS previous_id, nxt.id AS next_id
