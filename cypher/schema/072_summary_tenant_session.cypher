// The context window's current-summary lookup (cypher/sessions/window_state) finds a session's summaries by
// tenant and session; without this index it scanned every :Summary.
// tenant-free: schema statement
CREATE INDEX summary_tenant_session IF NOT EXISTS FOR (n:Summary) ON (n.tenant_id, n.session_id)
