// Set episodes' retain_until = ingested_at + $days (null when $days is null or the episode is held: a legal hold
// blocks expiry). An episode whose retain_until had passed at $now keeps it: it is gone to every read already
// (every read filters retain_until > now), as after the sweep, and a longer retention set since does not bring it
// back; held, a hold placed after its retention ended keeps it from the sweep (governance/expired_episodes skips
// held ones), not readable again. With $only_missing, only unheld episodes that have no retain_until yet (the
// sweeper's pass).
MATCH (e:Episode {tenant_id: $tenant_id})
WHERE NOT $only_missing OR (e.retain_until IS NULL AND NOT coalesce(e.legal_hold, false))
SET e.retain_until = CASE WHEN e.retain_until <= $now THEN e.retain_until
                          WHEN coalesce(e.legal_hold, false) OR $days IS NULL THEN null
                          ELSE e.ingested_at + duration({days: $days}) END
RETURN count(e) AS stamped
