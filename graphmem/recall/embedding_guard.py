"""Guard against mixing embedding models: vectors from different models are not comparable.

The first time a configured embedder is used for recall, its `name` (e.g. "local:all-MiniLM-L6-v2") is recorded
on the database's `(:GraphmemSchema {id: 'graphmem'})` node as `embedding_model` (query `search/embedding_model`);
afterwards a different embedder is refused for vector search (a `degraded` note, full-text and graph still run)
until the operator re-embeds the graph with `graphmem embeddings reembed` (which also resets the record). The
vector dimension itself is guarded by the schema (`graphmem.store.schema.apply_schema`).
"""
from __future__ import annotations

import logging

from graphmem.store import Database

log = logging.getLogger("graphmem.recall")


class EmbeddingGuard:
    """Checks once per process that the configured embedder matches the recorded embedding model."""

    def __init__(self, db: Database, embedder_name: str | None):
        self.db, self.name = db, embedder_name
        self._problem: str | None = None
        self._checked = False

    def problem(self) -> str | None:
        """None when vector search may run; else a one-line reason ("vector: ...")."""
        if self.name is None:
            return "vector: no embedder configured (GRAPHMEM_EMBEDDER=none)"
        if not self._checked:
            row = self.db.execute("search/embedding_model", model=self.name)
            recorded = row[0]["embedding_model"] if row else self.name
            if recorded != self.name:
                self._problem = (f"vector: stored vectors were made by {recorded!r} but the configured embedder is "
                                 f"{self.name!r}; vectors of different models are not comparable. Re-embed the graph "
                                 f"with `graphmem embeddings reembed`, or configure {recorded!r} again (a local "
                                 f"model is chosen by GRAPHMEM_LOCAL_MODEL)")
                log.error(self._problem)
            self._checked = True
        return self._problem
