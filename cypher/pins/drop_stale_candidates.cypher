// Delete the pin candidates of session $session_id under keys $keys whose source turn (set_by) is past retention at
// $now (its own retain_until or its session's, the condition every read uses for episodes: episodes/retained), as
// the sweep's expiry will (governance/delete_pins: a candidate goes with the turn it came from): the reads already
// hide them (pins/list, pins/get, sessions/window_state), so a write finds no pin there. Each is write-locked first
// and checked again once locked (a concurrent write's change is seen). The session remembers each one's version
// (`retired_pin_versions`, as the sweep and pins/delete do), so a pin created again under the key continues its
// versions: a write that read the candidate before its turn expired gets a 409, never the new pin.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id})
WHERE p.key IN $keys AND p.status = 'candidate'
SET p._lock = true
REMOVE p._lock
WITH p
WHERE p.status = 'candidate'
  AND EXISTS { MATCH (e:Episode {tenant_id: $tenant_id, id: p.set_by})
               WHERE e.retain_until <= $now
                  OR EXISTS { MATCH (es:Session {tenant_id: $tenant_id, id: e.session_id}) WHERE es.retain_until <= $now } }
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
FOREACH (_ IN CASE WHEN s IS NULL THEN [] ELSE [1] END |
  SET s.retired_pin_versions = [r IN coalesce(s.retired_pin_versions, []) WHERE NOT r STARTS WITH p.key + ':'] +
                               [p.key + ':' + toString(p.version)])
DETACH DELETE p
RETURN count(*) AS dropped
