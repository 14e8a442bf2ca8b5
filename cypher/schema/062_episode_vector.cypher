// tenant-free: schema statement
CREATE VECTOR INDEX episode_embedding IF NOT EXISTS FOR (n:Episode) ON n.embedding
OPTIONS {indexConfig: {`vector.dimensions`: $dimension, `vector.similarity_function`: 'cosine'}}
