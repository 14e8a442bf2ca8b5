// Define (or redefine) a tenant pin key: its pin type and, for custom pins, its value type.
MERGE (d:PinKeyDef {tenant_id: $tenant_id, key: $key})
SET d.type = $type, d.value_type = $value_type, d.description = $description, d.updated_at = $now
RETURN d {.*} AS definition
