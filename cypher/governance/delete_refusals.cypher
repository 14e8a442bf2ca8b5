// Delete the write-policy Refusal records of episodes $episode_ids (by property or by relationship).
MATCH (r:Refusal {tenant_id: $tenant_id})
WHERE r.episode_id IN $episode_ids
   OR EXISTS { MATCH (r)--(e:Episode) WHERE e.tenant_id = $tenant_id AND e.id IN $episode_ids }
DETACH DELETE r
RETURN count(*) AS deleted
