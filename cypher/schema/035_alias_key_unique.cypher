// A normalised name or alias within a kind ("Person:dana smith") resolves to one entity per tenant.
// The alias node is MERGEd before its entity is created, so concurrent writers cannot duplicate an entity.
// tenant-free: schema statement
CREATE CONSTRAINT alias_key_unique IF NOT EXISTS FOR (n:Alias) REQUIRE (n.tenant_id, n.key) IS UNIQUE
