// tenant-free: schema statement
CREATE CONSTRAINT api_key_id_unique IF NOT EXISTS FOR (n:ApiKey) REQUIRE n.id IS UNIQUE
