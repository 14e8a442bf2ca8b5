// Facts among $ids without an embedding, with the texts to embed (the statement).
UNWIND $ids AS id
MATCH (f:Fact {id: id})
WHERE f.tenant_id = $tenant_id AND f.embedding IS NULL
RETURN f.id AS id, f.statement AS text
