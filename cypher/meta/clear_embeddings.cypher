// Dimension migration: embeddings of the old size are removed (recomputed later).
// tenant-free: migration over every tenant, run only on explicit request
MATCH (n) WHERE n.embedding IS NOT NULL
CALL (n) { REMOVE n.embedding } IN TRANSACTIONS OF 10000 ROWS
