// tenant-free: schema statement
CREATE CONSTRAINT api_key_hash_unique IF NOT EXISTS FOR (n:ApiKey) REQUIRE n.hash IS UNIQUE
