// Benchmark loader only (bench/recall.py): synthetic episodes of one tenant. $rows: [{id, content, search_terms, occurred_at, key}]
UNWIND $rows AS r
CREATE (:Episode {id: r.id, tenant_id: $tenant_id, tenant_token: $tenant_token, kind: 'message', content: r.content, search_terms: r.search_terms,
                  occurred_at: r.occurred_at,
                  ingested_at: $now, session_id: 'bench', user_id: 'bench', role: 'user', idempotency_key: r.key,
                  source: 'user_explicit', token_count: 10, extraction_status: 'done', legal_hold: false, seq: 0})
