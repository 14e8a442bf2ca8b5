"""Embeds facts, entities and episodes and stores the vectors on their nodes (Neo4j vector indexes).

Texts embedded: a fact's statement, an entity's name and aliases, an episode's speaker and content. The
embedder is cached (`graphmem.embeddings.CachedEmbedder`), so a repeated text costs nothing. Embedding
never blocks a write: failures are logged and the node is left for `backfill` (run by the worker). Vectors are
only written by the embedding model recorded for the graph (`graphmem.recall.embedding_guard`). Nothing past
retention (a fact past its `retain_until`, an episode past its own or its session's), which no read shows and the
sweeper removes, is sent to the embedder.
"""
from __future__ import annotations

import logging
from collections.abc import Callable

from graphmem.embeddings import Embedder
from graphmem.recall.embedding_guard import EmbeddingGuard
from graphmem.store import Database, require_tenant
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.indexer")
QUERY = {"fact": "embeddings/set_fact_vectors", "entity": "embeddings/set_entity_vectors",
         "episode": "embeddings/set_episode_vectors"}


class Indexer:
    """Writes embeddings for nodes that lack them. `batch_size` texts per embedder call."""

    def __init__(self, db: Database, embedder: Embedder | None, batch_size: int = 64):
        self.db, self.embedder, self.batch_size = db, embedder, batch_size
        self.guard = EmbeddingGuard(db, embedder.name if embedder is not None else None)

    def _store(self, tenant_id: str, items: list[tuple[str, str, str]]) -> int:
        """items: (kind, id, text). Returns how many vectors were stored."""
        if self.embedder is None or not items:
            return 0
        problem = self.guard.problem()
        if problem:  # never store vectors of another model next to the recorded one's
            log.error("not storing embeddings: %s", problem)
            return 0
        stored = 0
        for start in range(0, len(items), self.batch_size):
            chunk = [it for it in items[start:start + self.batch_size] if it[2]]
            vectors = self.embedder.embed([text for _, _, text in chunk])
            for kind in QUERY:
                rows = [{"id": i, "vector": v} for (k, i, _), v in zip(chunk, vectors) if k == kind]
                if rows:
                    self.db.execute(QUERY[kind], tenant_id=tenant_id, rows=rows)
                    stored += len(rows)
        return stored

    def index_facts(self, tenant_id: str, fact_ids: list[str]) -> int:
        """Embed the facts `fact_ids` and their subject/object entities, where missing."""
        require_tenant(tenant_id)
        if self.embedder is None or not fact_ids:
            return 0
        items = [("fact", r["id"], r["text"]) for r in self.db.rows("embeddings/facts_missing", tenant_id=tenant_id, ids=fact_ids)]
        items += [("entity", r["id"], r["text"]) for r in
                  self.db.rows("embeddings/entities_missing_for_facts", tenant_id=tenant_id, ids=fact_ids)]
        return self._safe(tenant_id, items)

    def index_episodes(self, tenant_id: str, episode_ids: list[str]) -> int:
        """Embed the episodes `episode_ids`, where missing and within retention now. Returns how many were stored."""
        require_tenant(tenant_id)
        if self.embedder is None or not episode_ids:
            return 0
        items = [("episode", r["id"], r["text"]) for r in
                 self.db.rows("embeddings/episodes_missing", tenant_id=tenant_id, ids=episode_ids, now=utcnow())]
        return self._safe(tenant_id, items)

    def backfill(self, tenant_id: str, limit: int = 500) -> int:
        """Embed up to `limit` nodes of each kind that still lack a vector (facts and episodes within retention
        now). Returns how many were stored."""
        require_tenant(tenant_id)
        if self.embedder is None:
            return 0
        return self._safe(tenant_id, self._candidates(tenant_id, limit))

    def _candidates(self, tenant_id: str, limit: int) -> list[tuple[str, str, str]]:
        """Up to `limit` (kind, id, text) of each kind in the tenant that lack a vector, none past retention now."""
        return [(r["kind"], r["id"], r["text"]) for r in
                self.db.rows("embeddings/backfill_candidates", tenant_id=tenant_id, limit=limit, now=utcnow())]

    def reembed(self, on_tenant: Callable[[str, int], None] | None = None, batch: int = 500) -> int:
        """Replace every stored vector, in every tenant, by one from this indexer's embedder: remove all
        embeddings, record this embedder as the graph's model (`GraphmemSchema.embedding_model`), then embed
        each tenant's facts, entities and episodes `batch` per kind and call at a time. `on_tenant(tenant_id,
        stored)` is called after each tenant. Returns the number of vectors stored.

        For a change of model (e.g. GRAPHMEM_LOCAL_MODEL); vector search finds only what is re-embedded so far, and
        processes still configured with the old model stop using vectors within their guard's recheck (30 s).
        Raises ValueError when no embedder is configured; embedder errors propagate (run it again to go on)."""
        if self.embedder is None:
            raise ValueError("no embedder is configured (GRAPHMEM_EMBEDDER=none): nothing to re-embed with")
        self.db.schema_statement("meta/clear_embeddings")
        self.db.execute("meta/set_embedding_model", model=self.embedder.name)
        self.guard = EmbeddingGuard(self.db, self.embedder.name)
        total = 0
        for row in self.db.rows("meta/unembedded_tenants"):
            tenant, stored, previous = row["tenant_id"], 0, None
            while True:
                items = self._candidates(tenant, batch)
                ids = {i for _, i, _ in items}
                if not ids or ids == previous:  # done, or only nodes without text are left
                    break
                stored += self._store(tenant, items)
                previous = ids
            total += stored
            if on_tenant:
                on_tenant(tenant, stored)
        return total

    def _safe(self, tenant_id: str, items: list[tuple[str, str, str]]) -> int:
        try:
            return self._store(tenant_id, items)
        except Exception as exc:  # degrade, don't block: backfill retries later
            log.warning("embedding failed for %d items of tenant %s: %s", len(items), tenant_id, exc)
            return 0
