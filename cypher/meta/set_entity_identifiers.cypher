// Schema migration 20 -> 21: store the email and the domain graphmem.identifiers.email_address and domain_name now make
// of each entity's. $rows: [{id, email, domain}] (null: that one is left as it is), no two with one email or one
// domain (graphmem.store.schema.renormalise_identifiers sees to it). An entity whose new email (or domain) another
// entity of the tenant already holds keeps its own (the unique constraints entity_email_unique and
// entity_domain_unique would refuse it; one entity stored twice, in two forms, is not merged here), returned in
// `taken`: [{id, attr: 'email' | 'domain', value, owner}]. Returns how many emails and domains were written.
UNWIND $rows AS r
MATCH (e:Entity {tenant_id: $tenant_id, id: r.id})
OPTIONAL MATCH (o:Entity {tenant_id: $tenant_id, email: r.email}) WHERE o <> e
WITH r, e, o.id AS email_owner
OPTIONAL MATCH (p:Entity {tenant_id: $tenant_id, domain: r.domain}) WHERE p <> e
WITH r, e, email_owner, p.id AS domain_owner,
     r.email IS NOT NULL AND email_owner IS NULL AS new_email, r.domain IS NOT NULL AND p IS NULL AS new_domain
SET e.email = CASE WHEN new_email THEN r.email ELSE e.email END,
    e.domain = CASE WHEN new_domain THEN r.domain ELSE e.domain END
RETURN sum(toInteger(new_email) + toInteger(new_domain)) AS updated,
       [x IN collect({id: e.id, attr: 'email', value: r.email, owner: email_owner})
             + collect({id: e.id, attr: 'domain', value: r.domain, owner: domain_owner}) WHERE x.owner IS NOT NULL]
         AS taken
