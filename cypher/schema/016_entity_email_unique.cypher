// A strong identifier names one entity per tenant.
// tenant-free: schema statement
CREATE CONSTRAINT entity_email_unique IF NOT EXISTS FOR (n:Entity) REQUIRE (n.tenant_id, n.email) IS UNIQUE
