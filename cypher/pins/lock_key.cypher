// A tenant's definition of one pin key, if any, with its write lock taken for this transaction: a pin write under
// the key and a redefinition of it run one after the other (graphmem.context.pins: neither sees the other half
// done). Returns no row when the key is not defined.
MATCH (d:PinKeyDef {tenant_id: $tenant_id, key: $key})
SET d.lock_seq = coalesce(d.lock_seq, 0) + 1
RETURN d {.*, lock_seq: null} AS definition
