// A tenant's definition of one pin key, if any.
MATCH (d:PinKeyDef {tenant_id: $tenant_id, key: $key})
RETURN d {.*} AS definition
