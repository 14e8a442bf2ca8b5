// Schema migration 6 -> 7: copy the transaction time a fact was closed (closed_at) onto its RELATED edge, for up
// to $limit closed facts whose edge lacks it, so that paths walk a fact as open when known_at is before it was
// closed (recall/around, recall/between), as neighbours and search do. Returns how many edges were updated.
// tenant-free: migration over every tenant, run once at start-up by apply_schema
MATCH (f:Fact) WHERE f.closed_at IS NOT NULL
MATCH ()-[l:RELATED {fact_id: f.id}]->() WHERE l.closed_at IS NULL
WITH l, f LIMIT $limit
SET l.closed_at = f.closed_at
RETURN count(l) AS updated
