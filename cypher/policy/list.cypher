// The tenant's write-policy refusals, newest first, paginated. Like every read, it leaves out the refusals of an
// episode past retention at $now before the sweeper removes them with it: one past its own retain_until, or of a
// session past its retention (retain_until: idle longer than the tenant's session_ttl_days). A refusal naming no
// stored episode stays.
MATCH (x:Refusal {tenant_id: $tenant_id})
WHERE NOT EXISTS {
  MATCH (e:Episode {id: x.episode_id})
  WHERE e.tenant_id = $tenant_id
    AND (e.retain_until <= $now
         OR EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now })
}
RETURN x {.*} AS refusal
ORDER BY x.created_at DESC, x.id
SKIP $offset LIMIT $limit
