// Write-policy refusals listed per tenant, newest first.
// tenant-free: schema statement
CREATE INDEX refusal_tenant_created IF NOT EXISTS FOR (n:Refusal) ON (n.tenant_id, n.created_at)
