// Idempotent appends: one episode per (tenant, idempotency key); MERGE on it is race-free.
// tenant-free: schema statement
CREATE CONSTRAINT episode_idempotency_unique IF NOT EXISTS FOR (n:Episode) REQUIRE (n.tenant_id, n.idempotency_key) IS UNIQUE
