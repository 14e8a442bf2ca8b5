// Schema migration 22 -> 23: the tenant's user ids that match $pattern (a character graphmem.identifiers.blank finds blank
// at either end), as an episode, a session or a legal hold on a user holds them, or a consent whose subject matches
// $subject ('user:' and such an id) names them; each once, sorted (graphmem.store.schema.retrim_user_ids).
CALL () {
  MATCH (e:Episode {tenant_id: $tenant_id}) WHERE e.user_id =~ $pattern RETURN e.user_id AS user_id
  UNION
  MATCH (s:Session {tenant_id: $tenant_id}) WHERE s.user_id =~ $pattern RETURN s.user_id AS user_id
  UNION
  MATCH (h:LegalHold {tenant_id: $tenant_id, target_kind: 'user'}) WHERE h.target_id =~ $pattern
  RETURN h.target_id AS user_id
  UNION
  MATCH (c:Consent {tenant_id: $tenant_id}) WHERE c.subject =~ $subject RETURN substring(c.subject, 5) AS user_id
}
RETURN user_id
ORDER BY user_id
