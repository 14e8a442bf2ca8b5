// The derived (Entity)-[:RELATED {fact_id, ...}]->(Entity) edge of a fact (facts/create_batch) is found by its fact
// id whenever the fact changes (close, expire, repair, retention stamp, delete).
// tenant-free: schema statement
CREATE INDEX related_fact_id IF NOT EXISTS FOR ()-[r:RELATED]-() ON (r.fact_id)
