// tenant-free: schema statement
CREATE CONSTRAINT summary_id_unique IF NOT EXISTS FOR (n:Summary) REQUIRE n.id IS UNIQUE
