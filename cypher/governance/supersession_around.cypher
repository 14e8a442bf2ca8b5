// The supersession neighbourhood of facts $ids (about to be deleted): each fact's validity (and the end its assertion
// stated), the facts it superseded (with all of their superseders, their stated end and the end a retraction gave
// them before they were closed again) and the facts that superseded it.
UNWIND $ids AS fid
MATCH (d:Fact {id: fid})
WHERE d.tenant_id = $tenant_id
CALL (d) {
  OPTIONAL MATCH (d)-[:SUPERSEDES]->(o:Fact)
  WHERE o.tenant_id = $tenant_id
  OPTIONAL MATCH (n:Fact)-[:SUPERSEDES]->(o)
  WITH o, collect(n.id) AS superseders
  WHERE o IS NOT NULL
  RETURN collect({id: o.id, valid_from: o.valid_from, valid_to: o.valid_to, status: o.status,
                  stated_valid_to: o.stated_valid_to, prior_valid_to: o.prior_valid_to,
                  prior_status: o.prior_status, prior_value_retraction: coalesce(o.prior_value_retraction, false),
                  superseders: superseders}) AS olders
}
CALL (d) {
  OPTIONAL MATCH (n:Fact)-[:SUPERSEDES]->(d)
  RETURN collect(n.id) AS newers
}
RETURN d.id AS id, d.valid_from AS valid_from, d.valid_to AS valid_to, d.status AS status,
       d.stated_valid_to AS stated_valid_to,
       coalesce(d.value_retraction, false) AS value_retraction, olders, newers
