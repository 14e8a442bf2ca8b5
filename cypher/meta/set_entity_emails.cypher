// Schema migration 20 -> 21: store the email graphmem.models.email_address now makes of each entity's email.
// $rows: [{id, email}], no two with one email (graphmem.store.schema.renormalise_emails sees to it). An entity
// whose new email another entity of the tenant already holds keeps its own (the unique constraint
// entity_email_unique would refuse it; one person stored twice, in two forms, is not merged here) and is returned
// in `taken`: [{id, email, owner}]. Returns how many entities were updated.
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
OPTIONAL MATCH (o:Entity {tenant_id: $tenant_id, email: r.email}) WHERE o <> e
WITH r, e, o.id AS owner
CALL (r, e, owner) {
  WITH r, e WHERE owner IS NULL
  SET e.email = r.email
  RETURN count(e) AS set
}
RETURN sum(set) AS updated, [x IN collect({id: e.id, email: r.email, owner: owner}) WHERE x.owner IS NOT NULL] AS taken
