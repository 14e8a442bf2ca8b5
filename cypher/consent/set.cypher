// Record whether preferences may cross sessions, for the whole tenant (subject '*') or one user ('user:<id>').
MERGE (c:Consent {tenant_id: $tenant_id, subject: $subject})
SET c.share_preferences = $share_preferences, c.updated_at = $now
RETURN c {.*} AS consent
