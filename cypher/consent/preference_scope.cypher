// What context assembly needs to decide whether preferences found by search may enter this session, in one row:
// owners = session and user of the provenance episodes $ids; consents = the consent records that apply to
// $user_subject ("user:<id>", or null for no user): the tenant-wide one ('*') and the user's own.
CALL () {
  MATCH (e:Episode)
  WHERE e.tenant_id = $tenant_id AND e.id IN $ids
  RETURN collect({id: e.id, session_id: e.session_id, user_id: e.user_id}) AS owners
}
CALL () {
  MATCH (c:Consent {tenant_id: $tenant_id})
  WHERE c.subject IN ['*', $user_subject]
  RETURN collect({subject: c.subject, share_preferences: c.share_preferences}) AS consents
}
RETURN owners, consents
