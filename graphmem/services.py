"""The composition root: one `Services` object per process holds the database and every service.

Services are built lazily on first use from `FACTORIES` ("attribute": "module:function"); each factory takes
the `Services` object and returns the service, so a service can use the others (`services.graph`, ...)
without any module knowing them all. The API (`api/deps.py`), the worker and the CLI all go through it.
"""
from __future__ import annotations

import importlib
import threading
from typing import Any

from graphmem.settings import Settings
from graphmem.store import Database

FACTORIES: dict[str, str] = {
    "graph": "graphmem.graph:build",              # TemporalGraph: episodes, entities, facts (issue 2)
    "embedder": "graphmem.embeddings:build",      # Embedder | None
    "keys": "graphmem.keys:build",                # API keys -> tenant + role (issue 6)
    "ingest": "graphmem.ingest.service:build",    # episode intake, extraction, write policy, jobs (issue 3)
    "recall": "graphmem.recall.service:build",    # search and multi-hop recall (issue 4)
    "context": "graphmem.context.service:build",  # sessions, pins, assembly, compaction (issue 5)
    "governance": "graphmem.governance.service:build",  # retention, erasure, user-visible memory (issue 7)
    "sample_metrics": "graphmem.ops:build",       # refreshes gauges (jobs by state) when /metrics is scraped
}


class Services:
    """Lazily built services sharing one `Database` and one `Settings`. Thread-safe."""

    def __init__(self, db: Database, settings: Settings, **overrides: Any):
        self.db = db
        self.settings = settings
        self._built: dict[str, Any] = dict(overrides)
        self._lock = threading.RLock()

    @classmethod
    def from_settings(cls, settings: Settings) -> "Services":
        """Connect to Neo4j (NEO4J_URI or the local server) and apply the schema."""
        from graphmem.store.schema import apply_schema
        db = Database.from_settings(settings)
        apply_schema(db, settings.embedding_dimension, migrate=settings.allow_schema_migration)
        return cls(db, settings)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name not in FACTORIES:
            raise AttributeError(name)
        with self._lock:
            if name not in self._built:
                module, func = FACTORIES[name].split(":")
                self._built[name] = getattr(importlib.import_module(module), func)(self)
            return self._built[name]

    def close(self) -> None:
        """Close every built service that has `close()`, then the database."""
        for svc in list(self._built.values()):
            close = getattr(svc, "close", None)
            if callable(close):
                close()
        self.db.close()
