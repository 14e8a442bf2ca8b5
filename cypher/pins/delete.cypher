// Delete a locked pin (the caller checked the expected version under the lock). What it held is remembered on the
// session as dismissed ($dismissed: "<value_type>:<value>" strings, graphmem.context.pins.value_keys: a human
// gate's approval id too), so compaction never proposes it again as a candidate (a pin the agent deleted stays
// deleted). Its version is remembered too ($key:version in retired_pin_versions), so a pin created again under the key
// continues its versions (cypher pins/create): a write that read the deleted pin gets its 409, never the new one.
// The session's activity, as pins/create.
// The session's retain_until follows last_active_at: + the tenant's session_ttl_days, null without one or when a
// legal hold covers the session (as cypher/episodes/append), so that reads hide it once it is idle past the TTL.
MATCH (p:Pin {tenant_id: $tenant_id, session_id: $session_id, key: $key})
OPTIONAL MATCH (s:Session {tenant_id: $tenant_id, id: $session_id})
OPTIONAL MATCH (ts:TenantSettings {tenant_id: $tenant_id})
SET s.dismissed_pins = coalesce(s.dismissed_pins, []) + [d IN $dismissed WHERE NOT d IN coalesce(s.dismissed_pins, [])],
    s.retired_pin_versions = [r IN coalesce(s.retired_pin_versions, []) WHERE NOT r STARTS WITH $key + ':'] +
                             [$key + ':' + toString(p.version)],
    s.last_active_at = $now
SET s.retain_until = CASE WHEN ts.session_ttl_days IS NULL OR coalesce(s.legal_hold, false)
                          OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'session', target_id: s.id}) }
                          OR EXISTS { MATCH (:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: s.user_id}) }
                        THEN null ELSE s.last_active_at + duration({days: ts.session_ttl_days}) END
DETACH DELETE p
RETURN count(*) AS deleted
