// tenant-free: database-wide metadata, holds no tenant data
MERGE (m:GraphmemSchema {id: 'graphmem'})
SET m.version = $version, m.embedding_dimension = $embedding_dimension
