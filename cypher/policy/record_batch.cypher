// Record write-policy refusals (idempotent by id: a retried job records each refusal once). Never holds the refused
// content, only the reason, the field at fault, the episode and the predicate.
// $rows: [{id, reason, field, detail, episode_id, predicate}]
UNWIND $rows AS r
MERGE (x:Refusal {tenant_id: $tenant_id, id: r.id})
  ON CREATE SET x.reason = r.reason, x.field = r.field, x.detail = r.detail, x.episode_id = r.episode_id,
                x.predicate = r.predicate, x.created_at = $now
RETURN count(x) AS recorded
