// The recorded schema version and vector dimension (one node per database).
// tenant-free: database-wide metadata, holds no tenant data
MATCH (m:GraphmemSchema {id: 'graphmem'}) RETURN m.version AS version, m.embedding_dimension AS embedding_dimension, m.embedding_model AS embedding_model
