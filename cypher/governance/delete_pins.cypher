// Delete the pins of sessions $session_ids and pins set by an episode in $episode_ids (with any pin-version
// nodes linked to them).
MATCH (p:Pin {tenant_id: $tenant_id})
WHERE p.session_id IN $session_ids OR p.set_by IN $episode_ids
DETACH DELETE p
RETURN count(*) AS deleted
