// Every tenant that holds episodes, facts or sessions: the sweeper's round when no tenant is named.
// tenant-free: lists tenant ids only, so the sweeper can visit each tenant in turn
CALL () {
  MATCH (n:Episode) RETURN DISTINCT n.tenant_id AS tenant_id
  UNION
  MATCH (n:Fact) RETURN DISTINCT n.tenant_id AS tenant_id
  UNION
  MATCH (n:Session) RETURN DISTINCT n.tenant_id AS tenant_id
}
RETURN tenant_id ORDER BY tenant_id
