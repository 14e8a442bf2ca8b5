// Schema migration 22 -> 23: move the legal hold on user r.old and the consent of subject 'user:' + r.old to the
// trimmed user id r.new (graphmem.identifiers.trim_blank). $rows: [{old, new}], no two with one new
// (graphmem.store.schema.retrim_user_ids sees to it). A user has one hold and one consent record: where user r.new
// has its own already, the old record stays as written (both kept, nothing merged), returned in `taken`:
// [{record: 'legal hold', id, value, user, owner}] (owner: the id of r.new's hold) or [{record: 'consent', value,
// user}]. Returns how many holds and consents moved.
UNWIND $rows AS r
OPTIONAL MATCH (h:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: r.old})
OPTIONAL MATCH (k:LegalHold {tenant_id: $tenant_id, target_kind: 'user', target_id: r.new})
FOREACH (_ IN CASE WHEN h IS NOT NULL AND k IS NULL THEN [1] ELSE [] END | SET h.target_id = r.new)
WITH r, CASE WHEN h IS NOT NULL AND k IS NULL THEN 1 ELSE 0 END AS held,
     CASE WHEN h IS NOT NULL AND k IS NOT NULL
          THEN {record: 'legal hold', id: h.id, value: r.old, user: r.new, owner: k.id} END AS hold_taken
OPTIONAL MATCH (c:Consent {tenant_id: $tenant_id, subject: 'user:' + r.old})
OPTIONAL MATCH (d:Consent {tenant_id: $tenant_id, subject: 'user:' + r.new})
FOREACH (_ IN CASE WHEN c IS NOT NULL AND d IS NULL THEN [1] ELSE [] END | SET c.subject = 'user:' + r.new)
WITH held, hold_taken, CASE WHEN c IS NOT NULL AND d IS NULL THEN 1 ELSE 0 END AS consented,
     CASE WHEN c IS NOT NULL AND d IS NOT NULL THEN {record: 'consent', value: r.old, user: r.new} END AS consent_taken
RETURN sum(held + consented) AS updated, collect(hold_taken) + collect(consent_taken) AS taken
