// Release a legal hold: the node is removed (it names its target, which may later be erased).
MATCH (h:LegalHold {tenant_id: $tenant_id, id: $id})
WITH h, h {.*} AS hold
DELETE h
RETURN hold
