// The text an erasure deletes: the content of episodes $episode_ids and the statements of facts $fact_ids (read
// before they go), for what of it the kept sessions must forget (graphmem.context.compaction.dismissed_in).
CALL () {
  MATCH (e:Episode)
  WHERE e.id IN $episode_ids AND e.tenant_id = $tenant_id AND e.content IS NOT NULL
  RETURN collect(e.content) AS contents
}
CALL () {
  MATCH (f:Fact)
  WHERE f.id IN $fact_ids AND f.tenant_id = $tenant_id AND f.statement IS NOT NULL
  RETURN collect(f.statement) AS statements
}
RETURN contents + statements AS texts
