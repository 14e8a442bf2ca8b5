// Every stored embedding removed: on a dimension migration (apply_schema) and before `graphmem embeddings
// reembed` recomputes them with a new model.
// tenant-free: over every tenant, run only on explicit request
MATCH (n) WHERE n.embedding IS NOT NULL
CALL (n) { REMOVE n.embedding } IN TRANSACTIONS OF 10000 ROWS
