// A tenant's own predicates (ontology extensions).
// tenant-free: schema statement
CREATE CONSTRAINT predicate_unique IF NOT EXISTS FOR (n:Predicate) REQUIRE (n.tenant_id, n.name) IS UNIQUE
