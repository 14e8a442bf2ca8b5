// The consent records that apply to a user: the tenant-wide one and the user's own.
MATCH (c:Consent {tenant_id: $tenant_id})
WHERE c.subject IN ['*', $user_subject]
RETURN c {.*} AS consent
ORDER BY c.subject
