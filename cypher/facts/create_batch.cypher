// Create facts with their SUBJECT, OBJECT and DERIVED_FROM (provenance, role 'assertion') edges, and for a fact
// whose object is an entity the derived (subject)-[:RELATED]->(object) edge multi-hop recall walks: a copy of the
// fact's id and of the properties its filters and ranking read (DESIGN.md "Graph model"; every query that changes
// one of them changes the edge in the same statement). The episode MENTIONS the fact's subject and object entity
// (once per pair, however many facts it says about them; `recorded_at`: when graphmem learned it, transaction time),
// unless it is the record of an API write (`searchable: false`: it names the call, not anything said, so it neither
// shows near the entity in search nor keeps a forgotten fact's entity alive).
// $rows: [{id, subject_id, object_id (or null), episode_id, predicate, value, object_key, statement,
// search_terms (graphmem.store.fulltext), valid_from,
// valid_to, stated_valid_to (the end the assertion itself gave, kept for erasure repair: graphmem.governance.erasure;
// then also recorded as ended_by [episode_id] / ended_to [stated_valid_to], the episodes that stated an end of the
// fact and those ends, index by index, facts/close_batch appending to them: erasing one of those episodes undoes
// its end, graphmem.governance.erasure.unsay_ends),
// retain_until (ISO 8601 strings or null; stored as DATETIME), confidence, source, fact_class, status}].
// Returns how many facts were created (`created`) and linked to their object entity (`with_object`): a subject or
// object deleted since it was resolved (a concurrent forget) matches nothing and the counts fall short; the caller
// then runs the transaction again (graphmem.store.db.EntityGone).
// Times travel as strings because the driver packs a Python datetime far slower than a string; `recorded_at`,
// `last_confirmed_at` and `closed_at` (when valid_to is set) are $now. Returns nothing but a count.
// A fact said by an episode under legal hold gets no retain_until (the hold keeps it, as
// governance/stamp_fact_retention stamps it).
// The tenant guard: s and ep are matched within $tenant_id, so a row of another tenant creates nothing.
UNWIND $rows AS r
MATCH (s:Entity {id: r.subject_id}) WHERE s.tenant_id = $tenant_id
MATCH (ep:Episode {id: r.episode_id}) WHERE ep.tenant_id = $tenant_id
CREATE (f:Fact {id: r.id, tenant_id: $tenant_id, tenant_token: $tenant_token, predicate: r.predicate,
                value: r.value, object_key: r.object_key, statement: r.statement, search_terms: r.search_terms,
                valid_from: datetime(r.valid_from), valid_to: datetime(r.valid_to),
                stated_valid_to: datetime(r.stated_valid_to),
                ended_by: CASE WHEN r.stated_valid_to IS NULL THEN [] ELSE [r.episode_id] END,
                ended_to: CASE WHEN r.stated_valid_to IS NULL THEN [] ELSE [datetime(r.stated_valid_to)] END,
                recorded_at: $now, closed_at: CASE WHEN r.valid_to IS NULL THEN null ELSE $now END,
                last_confirmed_at: $now, confidence: r.confidence, source: r.source, fact_class: r.fact_class,
                status: r.status,
                retain_until: CASE WHEN ep.legal_hold THEN null ELSE datetime(r.retain_until) END})
CREATE (f)-[:SUBJECT]->(s)
CREATE (f)-[:DERIVED_FROM {recorded_at: $now, confidence: r.confidence, source: r.source, role: 'assertion'}]->(ep)
FOREACH (_ IN CASE WHEN ep.searchable IS NULL THEN [1] ELSE [] END |
  MERGE (ep)-[ms:MENTIONS]->(s) ON CREATE SET ms.recorded_at = $now)
WITH f, r, s, ep
CALL (f, r, s, ep) {
  WITH f, r, s, ep WHERE r.object_id IS NOT NULL
  MATCH (o:Entity {id: r.object_id}) WHERE o.tenant_id = $tenant_id
  CREATE (f)-[:OBJECT]->(o)
  FOREACH (_ IN CASE WHEN ep.searchable IS NULL THEN [1] ELSE [] END |
    MERGE (ep)-[mo:MENTIONS]->(o) ON CREATE SET mo.recorded_at = $now)
  CREATE (s)-[l:RELATED]->(o)
  SET l = f {.tenant_id, .predicate, .status, .valid_from, .valid_to, .closed_at, .prior_valid_to, .reclosed_at, .recorded_at, .expired_at, .retain_until, .confidence, fact_id: f.id}
  RETURN count(o) AS linked
}
RETURN count(f) AS created, sum(linked) AS with_object
