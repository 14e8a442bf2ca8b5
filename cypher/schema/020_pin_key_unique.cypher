// tenant-free: schema statement
CREATE CONSTRAINT pin_key_unique IF NOT EXISTS FOR (n:Pin) REQUIRE (n.tenant_id, n.session_id, n.key) IS UNIQUE
