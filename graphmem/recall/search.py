"""Hybrid search over facts, entities and episodes of one tenant.

Retrievers per target kind: full-text (Neo4j full-text indexes `fact_text`, `episode_text`, `entity_text`; Lucene
BM25), vector (Neo4j vector indexes `fact_embedding`, `episode_embedding`, `entity_embedding` via
`db.index.vector.queryNodes`, cosine) and graph proximity to seed entities. Every (kind, retriever) ranked list is
fused by reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009, k = 60; see `graphmem.recall.fusion`),
optionally re-ranked by MMR (Carbonell & Goldstein 1998).

Seeds are `SearchRequest.seed_entity_ids`, or else the entities the query itself names (full-text hits on names and
aliases, or vector hits with cosine >= `seed_min_cosine`). Query-derived seeds drive only the entity graph retriever:
on LoCoMo they are the speakers, who touch every fact, and proximity lists built from them cost 7 points of
recall@10 (measured, docs/benchmarks/locomo_search.md); explicit seeds drive the fact and episode lists too.
Tenancy inside the retrievers: full-text queries require the tenant's token (`graphmem.store.tenant_token`) inside
Lucene, and vector similarity is computed exactly over the tenant's own nodes (Neo4j 5.26's vector index cannot
filter, and top-k over every tenant misses a small tenant's nodes); every query re-checks `tenant_id`.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.embeddings import Embedder
from graphmem.errors import InvalidInput, NotFound
from graphmem.models import Entity, Episode, Fact
from graphmem.recall.embedding_guard import EmbeddingGuard
from graphmem.recall.fusion import RRF_K, jaccard, mmr, rrf
from graphmem.recall.lucene import build_query
from graphmem.recall.models import SearchHit, SearchRequest, SearchResponse
from graphmem.store import Database, require_tenant, tenant_token
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.recall")
_WORDS = re.compile(r"\w+")


@dataclass
class SearchTuning:
    """Knobs of the hybrid search. `weights` are RRF list weights keyed "<kind>/<retriever>" (default 1.0);
    `per_retriever` = how many hits each retriever contributes (at least k); `fetch_factor` = index over-fetch
    relative to that (other tenants' nodes are filtered out after the index call)."""

    weights: dict[str, float] = field(default_factory=dict)
    per_retriever: int = 50
    fetch_factor: int = 4
    max_fetch: int = 2_000
    seeds_from_query: int = 3
    seed_min_cosine: float = 0.6
    rrf_k: int = RRF_K


class HybridSearch:
    """`search(tenant_id, req)`: see the module docstring. Thread-safe (no per-call state on self)."""

    def __init__(self, db: Database, embedder: Embedder | None, tuning: SearchTuning | None = None):
        self.db, self.embedder = db, embedder
        self.tuning = tuning or SearchTuning()
        self.guard = EmbeddingGuard(db, embedder.name if embedder is not None else None)

    # ---- query vector -----------------------------------------------------------------------
    def _vector(self, text: str, degraded: list[str]) -> list[float] | None:
        problem = self.guard.problem()
        if problem:
            degraded.append(problem)
            return None
        try:
            return self.embedder.embed([text])[0]
        except Exception as exc:  # degrade, don't block (DESIGN principle 7)
            log.warning("query embedding failed: %s", exc)
            degraded.append(f"vector: embedder failed ({type(exc).__name__}: {exc})")
            return None

    # ---- one retriever query ------------------------------------------------------------------
    def _run(self, tx: Tx, name: str, params: dict, limit: int) -> list[dict]:
        """Run retriever query `name`. Each retriever reads `fetch` candidates of this tenant only (the full-text
        query requires the tenant token, vector similarity is computed over the tenant's nodes), so the post-filters
        (time, status, scope) rarely starve a list; `fetch_factor` leaves room for them."""
        return tx.rows(name, **params, limit=limit, fetch=min(self.tuning.max_fetch, limit * self.tuning.fetch_factor))

    # ---- the search ---------------------------------------------------------------------------
    def search(self, tenant_id: str, req: SearchRequest) -> SearchResponse:
        """Hybrid search (module docstring). Raises `TenantRequired`, `InvalidInput` (time range) and
        `NotFound` (a seed entity id that is not this tenant's, field `seed_entity_ids`)."""
        require_tenant(tenant_id)
        if req.occurred_after and req.occurred_before and req.occurred_after >= req.occurred_before:
            raise InvalidInput("occurred_after must be before occurred_before", field="occurred_after")
        now = utcnow()
        degraded: list[str] = []
        vector = self._vector(req.query, degraded)
        lucene = build_query(req.query)
        if lucene is None:
            degraded.append("fulltext: the query has no searchable words")
        limit = max(req.k, self.tuning.per_retriever)
        as_of = req.as_of or now
        known_at = req.known_at or now
        base = {"tenant_id": tenant_id, "tenant_token": tenant_token(tenant_id), "lucene": lucene, "vector": vector, "now": now, "as_of": as_of,
                "known_at": known_at, "entity_kinds": req.entity_kinds}

        def work(tx: Tx):
            seeds = list(dict.fromkeys(req.seed_entity_ids))
            explicit = bool(seeds)
            ent_rows = []
            if seeds:
                found = {r["entity"]["id"] for r in tx.rows("entities/get_many", tenant_id=tenant_id, ids=seeds)}
                missing = [s for s in seeds if s not in found]
                if missing:
                    raise NotFound(f"seed_entity_ids: no entity {missing[0]!r}", field="seed_entity_ids")
            if "entity" in req.targets or not seeds:
                ent_rows = self._run(tx, "search/entities", {**base, "entity_kinds": req.entity_kinds
                                                              if "entity" in req.targets else None,
                                                              "seed_ids": seeds}, limit)
                if not seeds:
                    seeds = self._seeds(ent_rows)
            scope = {"session_id": req.session_id, "user_id": req.user_id, "occurred_after": req.occurred_after,
                     "occurred_before": req.occurred_before}
            fact_rows = ep_rows = []
            if "fact" in req.targets:
                fact_rows = self._run(tx, "search/facts", {
                    **base, **scope, "seed_ids": seeds if explicit else [], "include_superseded": req.include_superseded,
                    "predicates": [p.upper() for p in req.predicates] if req.predicates else None,
                    "scoped": any(v is not None for v in scope.values())}, limit)
            if "episode" in req.targets:
                ep_rows = self._run(tx, "search/episodes", {**base, **scope, "seed_ids": seeds if explicit else []},
                                   limit)
            return (ent_rows if "entity" in req.targets else []), fact_rows, ep_rows, seeds
        ent_rows, fact_rows, ep_rows, seeds = self.db.read(work)
        hits = self._fuse(ent_rows, fact_rows, ep_rows)
        if req.mmr:
            hits = self._mmr(hits, req.mmr_lambda, req.k)
        return SearchResponse(hits=hits[:req.k], degraded=degraded)

    def _seeds(self, ent_rows: list[dict]) -> list[str]:
        """Entities the query names: a full-text hit on a name/alias or a close vector hit, best RRF first."""
        scored = []
        for row in ent_rows:
            ok = any(r["retriever"] == "fulltext" or (r["retriever"] == "vector" and r["score"] >= self.tuning.seed_min_cosine)
                     for r in row["reasons"])
            if ok:
                scored.append((sum(1.0 / (self.tuning.rrf_k + r["rank"]) for r in row["reasons"]), row["entity"]["id"]))
        scored.sort(reverse=True)
        return [eid for _, eid in scored[:self.tuning.seeds_from_query]]

    def _fuse(self, ent_rows, fact_rows, ep_rows) -> list[SearchHit]:
        lists: dict[str, list[tuple[int, tuple[str, str]]]] = {}
        meta: dict[tuple[str, str], dict] = {}
        for kind, rows in (("entity", ent_rows), ("fact", fact_rows), ("episode", ep_rows)):
            for row in rows:
                rec = row[kind]
                key = (kind, rec["id"])
                meta[key] = row
                for r in row["reasons"]:
                    lists.setdefault(f"{kind}/{r['retriever']}", []).append((r["rank"], key))
        ranked = [(name, [key for _, key in sorted(items)]) for name, items in lists.items()]
        fused = rrf(ranked, k=self.tuning.rrf_k, weights=self.tuning.weights)
        hits = []
        for key in sorted(fused, key=lambda x: (-fused[x], x)):
            kind, _ = key
            row = meta[key]
            reasons = [f"{r['retriever']} rank {r['rank']} (score {r['score']:.4g})"
                       for r in sorted(row["reasons"], key=lambda r: r["rank"])]
            hits.append(self._hit(kind, row, fused[key], reasons))
        return hits

    @staticmethod
    def _hit(kind: str, row: dict, score: float, reasons: list[str]) -> SearchHit:
        if kind == "fact":
            fact = Fact(**row["fact"])
            times = [t.to_native() if hasattr(t, "to_native") else t for t in row["episode_times"]]
            return SearchHit(kind="fact", id=fact.id, text=fact.statement, score=score, reasons=reasons, fact=fact,
                             episode_ids=row["episode_ids"], occurred_at=min(times) if times else fact.valid_from)
        if kind == "episode":
            ep = Episode(**row["episode"])
            text = f"{ep.speaker}: {ep.content}" if ep.speaker else ep.content
            return SearchHit(kind="episode", id=ep.id, text=text, score=score, reasons=reasons, episode=ep,
                             episode_ids=[ep.id], occurred_at=ep.occurred_at)
        ent = Entity(**row["entity"])
        text = ent.name + (f" ({', '.join(ent.aliases)})" if ent.aliases else "")
        return SearchHit(kind="entity", id=ent.id, text=text, score=score, reasons=reasons, entity=ent)

    @staticmethod
    def _mmr(hits: list[SearchHit], lam: float, k: int) -> list[SearchHit]:
        words = {h.id: set(_WORDS.findall(h.text.lower())) for h in hits}
        by_id = {h.id: h for h in hits}
        order = mmr([h.id for h in hits], {h.id: h.score for h in hits},
                    lambda a, b: jaccard(words[a], words[b]), lam=lam, k=k)
        return [by_id[i] for i in order]


def as_datetime(value) -> datetime | None:
    """A driver DateTime or datetime -> datetime (None passes)."""
    return value.to_native() if hasattr(value, "to_native") else value
