"""The graphmem HTTP service (FastAPI). `api.app:create_app` builds it; `graphmem serve` runs it."""
