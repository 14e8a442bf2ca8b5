// Schema migration 22 -> 23: give up to $limit of the tenant's episodes, and up to $limit of its sessions, whose
// user_id is $old the user id $new (graphmem.identifiers.trim_blank of it; episodes and sessions have no key of the user,
// so nothing collides). graphmem.store.schema.retrim_user_ids calls it again until both counts are below $limit.
CALL () {
  MATCH (e:Episode {tenant_id: $tenant_id, user_id: $old})
  WITH e LIMIT $limit
  SET e.user_id = $new
  RETURN count(e) AS episodes
}
CALL () {
  MATCH (s:Session {tenant_id: $tenant_id, user_id: $old})
  WITH s LIMIT $limit
  SET s.user_id = $new
  RETURN count(s) AS sessions
}
RETURN episodes, sessions
