// Record the embedding model that made the stored vectors, the first time one is used, and return what is
// recorded (so a later, different model can be refused instead of mixing incomparable vectors).
// tenant-free: database-wide metadata, holds no tenant data
MERGE (m:GraphmemSchema {id: 'graphmem'})
SET m.embedding_model = coalesce(m.embedding_model, $model)
RETURN m.embedding_model AS embedding_model
