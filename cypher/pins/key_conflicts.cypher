// The tenant's pins under $key whose value is not of pin type $type (and, for a custom key, of value type
// $value_type: the canonical attrs JSON of graphmem.context.pins holds "value_type":"<type>"): what a
// redefinition of the key would leave breaking its own definition (a compaction's unconfirmed candidate does not
// count: confirming it checks the definition then). Returns how many, and up to 3 of their sessions.
MATCH (p:Pin {tenant_id: $tenant_id, key: $key})
WHERE coalesce(p.status, 'active') <> 'candidate' AND (p.value_type <> $type
   OR ($value_type IS NOT NULL AND NOT coalesce(p.attrs, '') CONTAINS ('"value_type":"' + $value_type + '"')))
WITH p ORDER BY p.session_id
RETURN count(p) AS pins, collect(p.session_id)[..3] AS sessions
