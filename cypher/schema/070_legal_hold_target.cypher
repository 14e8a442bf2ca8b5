// Every episode append checks for a legal hold on its user or session by (tenant, target kind, target id).
// tenant-free: schema statement
CREATE INDEX legal_hold_target IF NOT EXISTS FOR (n:LegalHold) ON (n.tenant_id, n.target_kind, n.target_id)
