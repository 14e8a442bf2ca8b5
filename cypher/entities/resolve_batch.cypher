// Resolve entity references: by strong identifier (email, then external ids, then domain), else by name/alias within
// the kind unless the named entity carries a different email or domain than the reference, or another id of an
// external system the reference has an id of ($refs' `systems`: "crm:contact" for "crm:contact:c10"), since none of
// the reference's ids matched: then it is somebody else.
// $refs: [{idx, email, domain, external_keys: [..], systems: [..], alias_key}]. One record: rows = [{idx, named, match, namesakes}]
// in $refs order, where `match` is the chosen entity as a brief map (id, kind, name and what enrichment compares:
// email, domain, aliases, external_ids, summary) or null, and `named` says whether the name alias is taken (by
// anybody). A name several entities answer to (namesakes told apart by email, domain or external id) resolves to
// the alias's owner, unless that one is somebody else as above; `namesakes` then lists up to 6 of them (id, kind,
// name, email, domain, external_ids) whether or not the name matched, and `could_be` the ids of all of them that
// the reference's identifiers do not set apart (somebody else by the rule above); else both are null.
// `identified`: the ids of the entities the reference's strong identifiers name (more than one distinct id: the
// identifiers disagree); `by_email` the id of the entity the email names and `by_external` those of the entities
// the external ids name (to tell an email another entity holds from identifiers that disagree otherwise).
// A single record with a list: the driver decodes it far faster than one record per reference.
UNWIND $refs AS r
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, email: r.email})
  RETURN e AS by_email
}
CALL (r) {
  OPTIONAL MATCH (e:Entity {tenant_id: $tenant_id, domain: r.domain})
  RETURN e AS by_domain
}
CALL (r) {
  UNWIND r.external_keys AS k
  MATCH (:ExternalId {tenant_id: $tenant_id, key: k})-[:IDENTIFIES]->(e:Entity)
  WITH DISTINCT e
  RETURN collect(e)[0] AS by_external, collect(e.id) AS external_ids
}
CALL (r) {
  OPTIONAL MATCH (a:Alias {tenant_id: $tenant_id, key: r.alias_key})-[:ALIAS_OF]->(e:Entity)
  WITH a, e ORDER BY CASE WHEN e.id = a.entity_id THEN 0 ELSE 1 END, e.created_at, e.id
  RETURN collect(e)[0] AS by_name, collect(e {.id, .kind, .name, .email, .domain, .external_ids})[..6] AS namesakes,
         collect(CASE WHEN NOT (coalesce(r.email <> e.email, false) OR coalesce(r.domain <> e.domain, false)
                                OR (any(x IN e.external_ids WHERE x CONTAINS ':'
                                        AND left(x, size(x) - size(last(split(x, ':'))) - 1) IN r.systems)
                                    AND none(x IN r.external_keys WHERE x IN e.external_ids)))
                      THEN e.id END) AS could_be,
         collect(CASE WHEN e.email = r.email OR e.domain = r.domain
                           OR any(k IN r.external_keys WHERE k IN e.external_ids) THEN e END)[0] AS named_identified
}
// named_identified: an entity of the name that has one of the reference's identifiers, which the lookups above
// missed when a concurrent writer committed it between them (each subquery reads what is committed when it runs)
WITH r, by_name, namesakes, could_be, by_email, external_ids,
     [x IN [by_email.id, by_domain.id, named_identified.id] + external_ids WHERE x IS NOT NULL] AS identified,
     // the name's owner, unless it is somebody else (not in could_be)
     coalesce(by_email, by_external, by_domain, named_identified,
              CASE WHEN by_name.id IN could_be THEN by_name END) AS m
RETURN collect({idx: r.idx, named: by_name IS NOT NULL, by_email: by_email.id, by_external: external_ids,
                match: m {.id, .kind, .name, .email, .domain, .aliases, .external_ids, .summary},
                namesakes: CASE WHEN size(namesakes) > 1 THEN namesakes END,
                could_be: CASE WHEN size(namesakes) > 1 THEN could_be END,
                identified: identified}) AS rows
