// Forgetting a user: delete the user's Consent record (subject 'user:<user_id>', cypher/consent/).
MATCH (c:Consent {tenant_id: $tenant_id, subject: $subject})
DETACH DELETE c
RETURN count(*) AS deleted
