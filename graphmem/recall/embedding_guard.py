"""Guard against mixing embedding models: vectors from different models are not comparable.

The first time a configured embedder is used for recall, its `name` (e.g. "local:all-MiniLM-L6-v2") is recorded
on the database's `(:GraphmemSchema {id: 'graphmem'})` node as `embedding_model` (query `search/embedding_model`);
afterwards a different embedder is refused for vector search and for writing vectors (a `degraded` note; full-text
and graph still run) until the operator re-embeds the graph with `graphmem embeddings reembed` (which also resets
the record). The vector dimension itself is guarded by the schema (`graphmem.store.schema.apply_schema`).
"""
from __future__ import annotations

import logging
import time

from graphmem.store import Database

log = logging.getLogger("graphmem.recall")


class EmbeddingGuard:
    """Checks that the configured embedder matches the recorded embedding model, again every `recheck_s` seconds
    (default 30): after `graphmem embeddings reembed` records another model, a process still configured with the
    old one stops using vectors within that time instead of comparing vectors of two models.

    A process holds several guards (search, the indexer of writes, the worker's): a problem is logged once per
    process when it appears, not once per guard."""

    _logged: str | None = None  # the problem last logged by any guard of this process

    def __init__(self, db: Database, embedder_name: str | None, recheck_s: float = 30.0):
        self.db, self.name, self.recheck_s = db, embedder_name, recheck_s
        self._problem: str | None = None
        self._checked_at: float | None = None

    def problem(self) -> str | None:
        """None when vector search may run; else a one-line reason why it may not ("no embedder configured ...")."""
        if self.name is None:
            return "no embedder configured (GRAPHMEM_EMBEDDER=none)"
        now = time.monotonic()
        if self._checked_at is None or now - self._checked_at >= self.recheck_s:
            row = self.db.execute("search/embedding_model", model=self.name)
            recorded = row[0]["embedding_model"] if row else self.name
            if recorded != self.name:
                problem = (f"stored vectors were made by {recorded!r} but the configured embedder is "
                           f"{self.name!r}; vectors of different models are not comparable. Re-embed the graph "
                           f"with `graphmem embeddings reembed`, or configure {recorded!r} again "
                           f"({_setting_for(recorded)})")
                if problem != EmbeddingGuard._logged:
                    log.error(problem)
                    EmbeddingGuard._logged = problem
                self._problem = problem
            else:
                self._problem = EmbeddingGuard._logged = None
            self._checked_at = now
        return self._problem


def _setting_for(embedder_name: str) -> str:
    """The settings that select an embedder name: "local:e5-small-v2" -> "GRAPHMEM_EMBEDDER=local
    GRAPHMEM_LOCAL_MODEL=e5-small-v2", "openai:m" -> "GRAPHMEM_EMBEDDER=openai GRAPHMEM_EMBEDDING_MODEL=m and no
    ..._PREFIX", and an endpoint's prefixes ("openai:m query_prefix='query: '") -> "...
    GRAPHMEM_EMBEDDING_QUERY_PREFIX='query: '"."""
    kind, _, rest = embedder_name.partition(":")
    model, _, prefixes = rest.partition(" ")
    variable = {"local": "GRAPHMEM_LOCAL_MODEL", "openai": "GRAPHMEM_EMBEDDING_MODEL"}.get(kind)
    if not (variable and model):
        return "the embedder that made them"
    prefixes = prefixes.replace("query_prefix=", "GRAPHMEM_EMBEDDING_QUERY_PREFIX=").replace(
        "document_prefix=", "GRAPHMEM_EMBEDDING_DOCUMENT_PREFIX=")
    if kind == "openai" and not prefixes:
        prefixes = "and no GRAPHMEM_EMBEDDING_QUERY_PREFIX / GRAPHMEM_EMBEDDING_DOCUMENT_PREFIX"
    return f"GRAPHMEM_EMBEDDER={kind} {variable}={model}" + (f" {prefixes}" if prefixes else "")
