// Record the embedding model of the stored vectors outright (`graphmem embeddings reembed`, after every vector
// was removed), where search/embedding_model only records the first model ever used.
// tenant-free: database-wide metadata, holds no tenant data
MERGE (m:GraphmemSchema {id: 'graphmem'})
SET m.embedding_model = $model
RETURN m.embedding_model AS embedding_model
