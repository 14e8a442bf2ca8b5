// Extraction jobs (episodes by extraction_status) in each of $states, over all tenants: the graphmem_jobs gauge
// sampled when /metrics is scraped. Each state is counted through the extraction_status index.
// tenant-free: an operations metric; it returns only state names and counts, never tenant data
UNWIND $states AS state
CALL (state) {
  MATCH (e:Episode)
  WHERE e.extraction_status = state
  RETURN count(e) AS jobs
}
RETURN state, jobs
