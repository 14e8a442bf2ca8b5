"""Episode intake, write policy, extractors (LLM, declarative JSON mappings, explicit facts), durable jobs, worker.

Flow (DESIGN.md "Ingestion"): episode in -> write policy (secrets redacted) -> stored with
`extraction_status = pending` (the durable job) -> a `Worker` claims it -> an extractor proposes facts -> write
policy -> the core's entity resolution and temporal rules (`graphmem.store.facts.assert_batch`) -> job done.
"""
