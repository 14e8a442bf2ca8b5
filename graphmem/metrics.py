"""Prometheus metrics (prometheus-client), shared by the API, the workers and the services.

Names follow the Prometheus naming guide (https://prometheus.io/docs/practices/naming/): base units
(seconds), `_total` for counters.
"""
from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

REQUEST_LATENCY = Histogram(
    "graphmem_http_request_duration_seconds", "HTTP request latency by route template and method.",
    ["route", "method", "status"],
    buckets=(0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10))
JOBS = Gauge("graphmem_jobs", "Extraction jobs by state (sampled when /metrics is scraped).", ["state"])
LLM_TOKENS = Counter("graphmem_llm_tokens_total", "LLM tokens used, by tenant and kind (prompt, completion).",
                     ["tenant", "kind"])
EMBEDDING_MISMATCH = Gauge(
    "graphmem_embedding_model_mismatch",
    "1 when the configured embedder is not the model that made the stored vectors, so vector search is off (search "
    "runs on full-text and graph) until `graphmem embeddings reembed`; else 0 (sampled when /metrics is scraped).")
LLM_CALLS = Counter("graphmem_llm_calls_total", "LLM calls made, by tenant and outcome.", ["tenant", "outcome"])
