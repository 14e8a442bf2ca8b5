// "Who at organisation X has property Y": entities with a $member_predicate fact (default WORKS_AT) pointing at
// $org_id valid at $as_of, that also have a $opt.predicate fact valid at $as_of whose object is $opt.object_id, or
// whose literal value normalises to $opt.value_key, or (via) whose object entity itself has a $opt.via_predicate
// fact with value key $opt.via_value_key (e.g. people at Globex who REPORTS_TO someone who HAS_TITLE 'cfo'). With
// $opt.symmetric (a predicate such as KNOWS that holds both ways) the member may be the fact's object as well, and
// the other end is its subject: "Dana knows Sam" answers who at Globex knows Dana. With $opt.member_symmetric (a
// symmetric $member_predicate) the member may be the membership fact's subject or its object: "Dana knows Frank"
// answers who KNOWS Frank (Dana) and who KNOWS Dana (Frank), as it is one fact of the pair; and with
// $opt.via_symmetric (a symmetric $opt.via_predicate) the property's other end may be either end of the via fact. A null
// condition is ignored (the conditions travel in the map $opt so that one plan serves every mix of them). Facts:
// never candidates, recorded by $known_at and not corrected as known then (transaction time), never past retention
// ($now).
// Returns each person with the facts that matched (membership, property, via), each with provenance ids (the
// episodes recorded by $known_at as asserting or confirming it, not retracting or correcting it, still inside
// retention): one row
// per matching property fact (someone who KNOWS two people there is listed twice), in a total order so that pages
// neither repeat nor skip a row.
MATCH (org:Entity {tenant_id: $tenant_id, id: $org_id})<-[mo:OBJECT|SUBJECT]-(m:Fact)-[mp:SUBJECT|OBJECT]->(p:Entity)
WHERE m.tenant_id = $tenant_id AND m.predicate = $member_predicate AND m.status <> 'candidate'
  AND type(mo) <> type(mp) AND (type(mo) = 'OBJECT' OR coalesce($opt.member_symmetric, false))
  AND m.recorded_at <= $known_at AND (m.expired_at IS NULL OR m.expired_at > $known_at)
  AND (m.retain_until IS NULL OR m.retain_until > $now)
  AND m.valid_from <= $as_of AND (m.valid_to IS NULL OR m.valid_to > $as_of OR m.closed_at > $known_at
             OR (m.reclosed_at > $known_at AND m.prior_valid_to > $as_of))
OPTIONAL MATCH (p)<-[hr:SUBJECT|OBJECT]-(h:Fact)
WHERE $opt.predicate IS NOT NULL AND (type(hr) = 'SUBJECT' OR $opt.symmetric)
  AND h.tenant_id = $tenant_id AND h.predicate = $opt.predicate
  AND h.status <> 'candidate'
  AND h.recorded_at <= $known_at AND (h.expired_at IS NULL OR h.expired_at > $known_at)
  AND (h.retain_until IS NULL OR h.retain_until > $now)
  AND h.valid_from <= $as_of AND (h.valid_to IS NULL OR h.valid_to > $as_of OR h.closed_at > $known_at
             OR (h.reclosed_at > $known_at AND h.prior_valid_to > $as_of))
  AND ($opt.value_key IS NULL OR h.object_key = 'v:' + $opt.value_key)
  AND ($opt.object_id IS NULL OR EXISTS {
        MATCH (h)-[:SUBJECT|OBJECT]->(x:Entity {id: $opt.object_id}) WHERE x <> p })
  AND ($opt.via_predicate IS NULL OR EXISTS {
        MATCH (h)-[:SUBJECT|OBJECT]->(x:Entity)<-[vr:SUBJECT|OBJECT]-(v:Fact)
        WHERE x <> p AND (type(vr) = 'SUBJECT' OR coalesce($opt.via_symmetric, false))
          AND v.tenant_id = $tenant_id AND v.predicate = $opt.via_predicate AND v.status <> 'candidate'
          AND v.recorded_at <= $known_at AND (v.expired_at IS NULL OR v.expired_at > $known_at)
          AND (v.retain_until IS NULL OR v.retain_until > $now)
          AND v.valid_from <= $as_of AND (v.valid_to IS NULL OR v.valid_to > $as_of OR v.closed_at > $known_at
             OR (v.reclosed_at > $known_at AND v.prior_valid_to > $as_of))
          AND ($opt.via_value_key IS NULL OR v.object_key = 'v:' + $opt.via_value_key) })
WITH p, m, mp, h
WHERE $opt.predicate IS NULL OR h IS NOT NULL
OPTIONAL MATCH (h)-[:SUBJECT]->(hs:Entity)
OPTIONAL MATCH (h)-[:OBJECT]->(ho:Entity)
RETURN p {.*, embedding: null, search_terms: null, search_text: null} AS entity,
       m {.*, embedding: null, search_terms: null,
          subject_id: CASE WHEN type(mp) = 'SUBJECT' THEN p.id ELSE $org_id END,
          object_id: CASE WHEN type(mp) = 'SUBJECT' THEN $org_id ELSE p.id END} AS membership,
       [(m)-[d:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now)
         AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now } AND d.recorded_at <= $known_at
         AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] | e.id] AS membership_episode_ids,
       CASE WHEN h IS NULL THEN null ELSE h {.*, embedding: null, search_terms: null, subject_id: hs.id, object_id: ho.id} END AS property,
       CASE WHEN h IS NULL THEN [] ELSE [(h)-[d:DERIVED_FROM]->(e:Episode) WHERE e.tenant_id = $tenant_id AND (e.retain_until IS NULL OR e.retain_until > $now)
         AND NOT EXISTS { MATCH (ss:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE ss.retain_until <= $now } AND d.recorded_at <= $known_at
         AND coalesce(d.role, 'assertion') IN ['assertion', 'confirmation'] | e.id] END
         AS property_episode_ids
ORDER BY entity.name, entity.id, membership.id, property.id
SKIP $offset LIMIT $limit
