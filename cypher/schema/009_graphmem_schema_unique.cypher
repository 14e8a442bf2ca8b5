// One schema record per database (meta/set_schema MERGEs it): two processes starting at once on a fresh database
// made two without this constraint.
// tenant-free: schema statement
CREATE CONSTRAINT graphmem_schema_id_unique IF NOT EXISTS FOR (m:GraphmemSchema) REQUIRE m.id IS UNIQUE
