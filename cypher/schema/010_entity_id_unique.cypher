// Every entity has a globally unique id.
// tenant-free: schema statement
CREATE CONSTRAINT entity_id_unique IF NOT EXISTS FOR (n:Entity) REQUIRE n.id IS UNIQUE
