"""Memory governance: retention by fact class and per tenant, legal holds, the erasure cascade, the sweeper and
user-visible memories. The service is `graphmem.governance.service.Governance` (`services.governance`);
the rules are written down in docs/governance.md."""
