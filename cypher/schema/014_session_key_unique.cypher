// A session id is the caller's, unique within its tenant.
// tenant-free: schema statement
CREATE CONSTRAINT session_key_unique IF NOT EXISTS FOR (n:Session) REQUIRE (n.tenant_id, n.id) IS UNIQUE
