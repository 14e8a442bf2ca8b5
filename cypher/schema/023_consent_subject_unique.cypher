// One consent record per tenant and subject ('*' or 'user:<id>'); its index serves the context window's consent
// lookup (cypher/search/rank, for a window's viewer) and consent/get, which otherwise scanned every :Consent.
// tenant-free: schema statement
CREATE CONSTRAINT consent_subject_unique IF NOT EXISTS FOR (n:Consent) REQUIRE (n.tenant_id, n.subject) IS UNIQUE
