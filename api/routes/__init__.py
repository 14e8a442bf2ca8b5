"""One router per area. Each module exposes `router`; `create_app` includes them in this order."""

ROUTERS = [
    "health",      # /healthz, /readyz, /metrics
    "admin",       # /v1/admin: tenants and API keys
    "episodes",    # /v1/episodes (ingest)
    "jobs",        # /v1/jobs: extraction jobs (ingest)
    "policy",      # /v1/refusals: write-policy refusals (ingest)
    "facts",       # /v1/facts (graph)
    "ontology",    # /v1/ontology/predicates (graph)
    "entities",    # /v1/entities (recall)
    "search",      # /v1/search, /v1/recall (recall)
    "sessions",    # /v1/sessions (context)
    "pins",        # /v1/sessions/{id}/pins (context)
    "turns",       # /v1/turns: load the window, append the turn (context)
    "memories",    # /v1/memories: user-visible memory (governance)
    "governance",  # /v1/forget, holds, retention (governance)
]
