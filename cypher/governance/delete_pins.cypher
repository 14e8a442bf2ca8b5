// Delete the pins of sessions $session_ids, pins set by an episode in $episode_ids (an erasure's) and pin candidates
// (status 'candidate': compaction's proposals nobody confirmed) set by an episode in $candidate_episode_ids (an
// expiry's: a candidate goes with the turn it came from, a pin the agent wrote stays with its session), with any
// pin-version nodes linked to them. A kept session remembers each deleted pin's version (`retired_pin_versions`,
// as pins/delete), so that a pin created again under its key continues its versions. The values deleted from the
// kept sessions' pins before (`dismissed_pins`) are the erasure's to prune (governance/lock_dismissals,
// governance/undismiss_pins): only those its text holds go.
MATCH (p:Pin {tenant_id: $tenant_id})
WHERE p.session_id IN $session_ids OR p.set_by IN $episode_ids
   OR (p.status = 'candidate' AND p.set_by IN $candidate_episode_ids)
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: p.session_id}) WHERE NOT s.id IN $session_ids
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.retired_pin_versions = [r IN coalesce(s.retired_pin_versions, []) WHERE NOT r STARTS WITH p.key + ':'] +
                               [p.key + ':' + toString(p.version)])
DETACH DELETE p
RETURN count(*) AS deleted
