"""One router per area. Each module exposes `router`; `create_app` includes them in this order."""

ROUTERS = [
    "health",     # /healthz, /readyz, /metrics
    "admin",      # /v1/admin: tenants and API keys
]
