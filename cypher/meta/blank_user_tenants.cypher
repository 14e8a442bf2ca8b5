// Every tenant id holding a user id that matches $pattern (a character graphmem.identifiers.blank finds blank at either
// end) on an episode, a session or a legal hold on a user, or a consent whose subject matches $subject ('user:' and
// such an id): schema migration 22 -> 23 trims those as graphmem.models.SameUser now does
// (graphmem.store.schema.retrim_user_ids).
// tenant-free: migration over every tenant, run once at start-up by apply_schema
CALL () {
  MATCH (e:Episode) WHERE e.user_id =~ $pattern RETURN e.tenant_id AS tenant_id
  UNION
  MATCH (s:Session) WHERE s.user_id =~ $pattern RETURN s.tenant_id AS tenant_id
  UNION
  MATCH (h:LegalHold {target_kind: 'user'}) WHERE h.target_id =~ $pattern RETURN h.tenant_id AS tenant_id
  UNION
  MATCH (c:Consent) WHERE c.subject =~ $subject RETURN c.tenant_id AS tenant_id
}
WITH tenant_id WHERE tenant_id IS NOT NULL
RETURN DISTINCT tenant_id
