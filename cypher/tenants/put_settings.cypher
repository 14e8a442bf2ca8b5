// Create or replace the tenant's retention settings; version counts the changes.
// $fact_class_ttl_json: JSON object {fact_class: days or null}; days are whole days.
MERGE (s:TenantSettings {tenant_id: $tenant_id})
  ON CREATE SET s.id = $id, s.created_at = $now, s.version = 0
SET s.episode_retention_days = $episode_retention_days,
    s.session_ttl_days = $session_ttl_days,
    s.fact_class_ttl_json = $fact_class_ttl_json,
    s.updated_at = $now,
    s.version = s.version + 1
RETURN s {.*} AS settings
