// Facts among $ids that a held episode supports (a legal hold blocks their erasure and expiry).
UNWIND $ids AS fid
MATCH (f:Fact {id: fid})-[:DERIVED_FROM]->(e:Episode)
WHERE f.tenant_id = $tenant_id AND e.tenant_id = $tenant_id
  AND (e.legal_hold = true OR EXISTS {
    MATCH (h:LegalHold {tenant_id: $tenant_id})
    WHERE (h.target_kind = 'episode' AND h.target_id = e.id)
       OR (h.target_kind = 'session' AND h.target_id = e.session_id)
       OR (h.target_kind = 'user' AND h.target_id = e.user_id) })
RETURN DISTINCT f.id AS id
