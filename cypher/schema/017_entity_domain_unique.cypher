// tenant-free: schema statement
CREATE CONSTRAINT entity_domain_unique IF NOT EXISTS FOR (n:Entity) REQUIRE (n.tenant_id, n.domain) IS UNIQUE
