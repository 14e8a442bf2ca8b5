// An audit record of a governance action. It holds no erased content: the target is a SHA-256 hash,
// counts is a JSON object of counts by kind.
CREATE (a:AuditRecord {tenant_id: $tenant_id, id: $id, action: $action, target_kind: $target_kind,
                       target_hash: $target_hash, counts: $counts, actor: $actor, at: $at})
RETURN a {.*} AS record
