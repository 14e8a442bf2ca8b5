// Holds that block erasure or expiry: a hold on one of $user_ids or $session_ids, or a hold covering one of
// $episode_ids (on the episode, its session or its user), or an episode flagged legal_hold. At most 5 rows.
CALL () {
  MATCH (h:LegalHold {tenant_id: $tenant_id})
  WHERE (h.target_kind = 'user' AND h.target_id IN $user_ids)
     OR (h.target_kind = 'session' AND h.target_id IN $session_ids)
  RETURN h.target_kind AS target_kind, h.id AS hold_id
  UNION
  UNWIND $episode_ids AS eid
  MATCH (e:Episode {id: eid})
  WHERE e.tenant_id = $tenant_id
  OPTIONAL MATCH (h:LegalHold {tenant_id: $tenant_id})
  WHERE (h.target_kind = 'episode' AND h.target_id = e.id)
     OR (h.target_kind = 'session' AND h.target_id = e.session_id)
     OR (h.target_kind = 'user' AND h.target_id = e.user_id)
  WITH e, h WHERE h IS NOT NULL OR e.legal_hold = true
  RETURN coalesce(h.target_kind, 'episode') AS target_kind, h.id AS hold_id
}
RETURN target_kind, hold_id
LIMIT 5
