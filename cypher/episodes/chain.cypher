// The session's episodes by walking NEXT from the first one (used to check chain order).
MATCH (first:Episode {tenant_id: $tenant_id, session_id: $session_id})
WHERE NOT EXISTS { (:Episode {tenant_id: $tenant_id})-[:NEXT]->(first) }
MATCH path = (first)-[:NEXT*0..]->(last:Episode)
WHERE NOT (last)-[:NEXT]->()
RETURN [n IN nodes(path) | n.id] AS ids
