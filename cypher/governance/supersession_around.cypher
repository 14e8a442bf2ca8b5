// The supersession neighbourhood of facts $ids (about to be deleted): each fact's validity (and the end its assertion
// stated), the facts it superseded (with all of their superseders, their stated end, the end a retraction gave
// them before they were closed again, and `next`: the earliest surviving believed fact of their timeline that starts
// after them, any object for a predicate in $single_valued, the same object otherwise, and for a predicate in
// $symmetric also the pair's facts stored the other way round) and the facts that superseded it.
UNWIND $ids AS fid
MATCH (d:Fact {id: fid})
WHERE d.tenant_id = $tenant_id
CALL (d) {
  OPTIONAL MATCH (d)-[:SUPERSEDES]->(o:Fact)
  WHERE o.tenant_id = $tenant_id
  OPTIONAL MATCH (n:Fact)-[:SUPERSEDES]->(o)
  WITH o, collect(n.id) AS superseders
  WHERE o IS NOT NULL
  CALL (o) {
    CALL (o) {
      MATCH (o)-[:SUBJECT]->(:Entity)<-[:SUBJECT]-(x:Fact)
      WHERE x.tenant_id = $tenant_id AND x.predicate = o.predicate AND NOT x.id IN $ids
        AND x.status IN ['current', 'closed', 'retracted'] AND x.valid_from > o.valid_from
        AND (o.predicate IN $single_valued OR x.object_key = o.object_key)
      RETURN x
      UNION
      // a symmetric predicate (KNOWS): the pair's facts stored the other way round are of the same timeline
      WITH o WHERE o.predicate IN $symmetric
      MATCH (os:Entity)<-[:SUBJECT]-(o)-[:OBJECT]->(oo:Entity)<-[:SUBJECT]-(x:Fact)-[:OBJECT]->(os)
      WHERE x.tenant_id = $tenant_id AND x.predicate = o.predicate AND NOT x.id IN $ids
        AND x.status IN ['current', 'closed', 'retracted'] AND x.valid_from > o.valid_from
      RETURN x
    }
    WITH x ORDER BY x.valid_from, x.id
    RETURN head(collect(x {.id, .valid_from})) AS next
  }
  RETURN collect({id: o.id, valid_from: o.valid_from, valid_to: o.valid_to, status: o.status,
                  stated_valid_to: o.stated_valid_to, prior_valid_to: o.prior_valid_to,
                  prior_status: o.prior_status,
                  retraction_valid_to: o.retraction_valid_to,
                  retraction_value: coalesce(o.retraction_value, false),
                  superseders: superseders, next: next}) AS olders
}
CALL (d) {
  OPTIONAL MATCH (n:Fact)-[:SUPERSEDES]->(d)
  RETURN collect(n.id) AS newers
}
RETURN d.id AS id, d.valid_from AS valid_from, d.valid_to AS valid_to, d.status AS status,
       d.stated_valid_to AS stated_valid_to,
       coalesce(d.value_retraction, false) AS value_retraction, olders, newers
