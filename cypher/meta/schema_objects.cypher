// tenant-free: lists indexes and constraints (schema idempotency checks)
SHOW INDEXES YIELD name, type, state RETURN name, type, state ORDER BY name
