"""Hybrid search over facts, entities and episodes of one tenant.

Retrievers per target kind: full-text (Neo4j full-text indexes `fact_text`, `episode_text`, `entity_text`; Lucene
BM25), vector (Neo4j vector indexes `fact_embedding`, `episode_embedding`, `entity_embedding` via
`db.index.vector.queryNodes`, cosine) and graph proximity to seed entities. Every (kind, retriever) ranked list is
fused by reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009, k = 10; see `graphmem.recall.fusion`),
optionally re-ranked by MMR (Carbonell & Goldstein 1998).

One auto-commit read (`cypher/search/rank`) runs every retriever and returns each list's hits as ids, ranks and
text, plus the full records of the likely winners: the `prefetch` best by a preliminary RRF in Cypher (same formula,
no reply bonus) and their replies. Fusion, replies and MMR then pick the k winners here; a winner that was not
prefetched (rare: a reply bonus or MMR reaching deep) is read by a second call of the same query with no targets.
So a search is one round trip and decodes about 2k records, not the hundreds of candidates (each round trip costs
the Python driver ~0.3 ms of CPU and the server a transaction). A winner deleted between two reads is left out.

Graph proximity needs seeds: `SearchRequest.seed_entity_ids` (callers find them with
`RecallService.resolve_entity`). Seeds are not guessed from the query text: on LoCoMo the entities a question
names are the speakers, who touch every fact, and proximity lists built from them cost 7 points of recall@10
(measured, docs/benchmarks/locomo_search.md).
Tenancy inside the retrievers: full-text queries match the tenant's own terms only (`search_terms`, every word
prefixed per tenant, plus the tenant's token where a term could split: `graphmem.store.fulltext.tenant_query`), and
vector similarity is computed exactly over the tenant's own nodes (Neo4j 5.26's vector index cannot
filter, and top-k over every tenant misses a small tenant's nodes); every query re-checks `tenant_id`.
A context window searches as a `Viewer` (its session and user): the same read then ranks only what that session
may see, filtered before each retriever keeps its top hits (`graphmem.recall.models.Viewer`), so other users'
matches cannot crowd a user's own memories out of the top k.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

from graphmem.embeddings import Embedder
from graphmem.errors import InvalidInput, NotFound
from graphmem.models import SUPPORTING_ROLES, Degraded, Entity, Episode, Fact
from graphmem.recall.embedding_guard import EmbeddingGuard
from graphmem.recall.fusion import RRF_K, jaccard, mmr, rrf
from graphmem.recall.lucene import build_query, only_stop_words, terms
from graphmem.recall.models import Provenance, SearchHit, SearchRequest, SearchResponse, ViewedSearchResponse, Viewer
from graphmem.store import Database, require_tenant, whole
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.recall")
_WORDS = re.compile(r"\w+")
NO_ID = ""
"""Leads every id list search/rank gets (`_ids`): no node has this id, and the list is never empty. Neo4j keys
its plan cache by query text and parameter types (Cypher manual, "Query caches"), and an empty list is typed apart
from a list of strings, so each empty/non-empty mix of the four id lists would be planned anew: ~1.5 s per plan for
this query on a 2-core machine, five times a context window's search timeout."""


def _fact_options_need_facts(req: SearchRequest) -> None:
    """`InvalidInput` naming `predicates` (a non-empty list) or `include_superseded` (true) when `req.targets` has no
    "fact": both act on fact hits only, so the search would run without them and its answer look like one to them."""
    if "fact" in req.targets:
        return
    for name, given in (("predicates", bool(req.predicates)), ("include_superseded", req.include_superseded)):
        if given:
            raise InvalidInput(f"{name}: applies to fact hits only; add \"fact\" to targets or leave {name} out",
                               field=name)


def _ids(ids: list[str]) -> list[str]:
    """An id list for search/rank: `NO_ID`, then `ids`."""
    return [NO_ID, *ids]


class Candidate(NamedTuple):
    """A fused search result before hydration: `kind` ("fact", "entity", "episode"), `id`, `text` (what MMR
    compares), fused RRF `score`, and `reasons` as the query returned them ([{retriever, rank, score}])."""

    kind: str
    id: str
    text: str
    score: float
    reasons: list[dict]

    def explain(self) -> list[str]:
        """The reasons as shown to callers: "<retriever> rank <r> (score <s>)", best rank first."""
        return [f"{r['retriever']} rank {r['rank']} (score {r['score']:.4g})"
                for r in sorted(self.reasons, key=lambda r: r["rank"])]


@dataclass
class SearchTuning:
    """Knobs of the hybrid search. `weights` are RRF list weights keyed "<kind>/<retriever>" (default 1.0);
    `per_retriever` = how many hits each retriever contributes (at least k); `fetch_factor` = index over-fetch
    relative to that (the filters run on what the index call returns); `refetch` = how deep each further read
    goes while the filters starve a list (search/rank's `starved`: a retriever read `fetch` candidates and fewer
    than its `limit` passed), so a filter that takes out all of the best 2,000 matches (a predicate, a session, a
    user in a tenant where one word is in thousands of facts) still finds its own (20,000 candidates read in
    70-120 ms on a tenant of 11,700 facts of which 9,000 match); `replies` = rank the reply to a question episode
    right after it (`HybridSearch._with_replies`); `prefetch_factor` x k candidates (by the preliminary RRF) are
    read in full with the lists."""

    weights: dict[str, float] = field(default_factory=dict)
    per_retriever: int = 50
    fetch_factor: int = 2
    prefetch_factor: int = 2
    refetch: tuple[int, ...] = (2_000, 20_000)
    rrf_k: int = RRF_K
    replies: bool = True


TOO_MANY_TERMS = Degraded(source="fulltext", reason="the query's words are too long to search as terms (over Lucene's "
                          "clause limit: text without spaces, such as Han script, counts each character); shorten it")
"""The `degraded` reason of a query full-text could not search at all for its length (`build_query` gave None)."""


class HybridSearch:
    """`search(tenant_id, req)`: see the module docstring. Thread-safe (no per-call state on self)."""

    def __init__(self, db: Database, embedder: Embedder | None, tuning: SearchTuning | None = None):
        self.db, self.embedder = db, embedder
        self.tuning = tuning or SearchTuning()
        self.guard = EmbeddingGuard(db, embedder.name if embedder is not None else None)

    # ---- query vector -----------------------------------------------------------------------
    def _vector(self, text: str, degraded: list[Degraded]) -> list[float] | None:
        problem = self.guard.problem()
        if problem:
            degraded.append(Degraded(source="vector", reason=problem))
            return None
        try:
            return self.embedder.embed_query(text)
        except Exception as exc:  # degrade, don't block (DESIGN principle 7)
            log.warning("query embedding failed: %s", exc)
            degraded.append(Degraded(source="vector", reason=f"embedder failed ({type(exc).__name__}: {exc})"))
            return None

    # ---- the search ---------------------------------------------------------------------------
    def search(self, tenant_id: str, req: SearchRequest, viewer: Viewer | None = None) -> SearchResponse:
        """Hybrid search (module docstring). With `viewer` only what that context window may see is ranked, and
        the answer is a `ViewedSearchResponse` (it also counts the facts withheld). Raises `TenantRequired`,
        `InvalidInput` (time range; `predicates` or `include_superseded` without "fact" in `targets`, which would
        do nothing) and `NotFound` (a seed entity id that is not this tenant's, field
        `seed_entity_ids[i]`)."""
        require_tenant(tenant_id)
        if req.occurred_after and req.occurred_before and req.occurred_after >= req.occurred_before:
            raise InvalidInput("occurred_after must be before occurred_before", field="occurred_after")
        _fact_options_need_facts(req)
        now = utcnow()
        degraded: list[Degraded] = []
        vector = self._vector(req.query, degraded)
        lucene = build_query(req.query, tenant_id)
        if lucene is None:
            degraded.append(TOO_MANY_TERMS if terms(req.query)
                            else Degraded(source="fulltext", reason="the query has no searchable words"))
        elif only_stop_words(req.query):
            degraded.append(Degraded(source="fulltext", reason=(
                "the query has only common words or single characters (" + ", ".join(terms(req.query)) +
                "), so word matches say little; name who or what it is about")))
        seeds = list(dict.fromkeys(req.seed_entity_ids))
        if seeds:
            found = {r["entity"]["id"] for r in self.db.rows("entities/get_many", tenant_id=tenant_id, ids=seeds)}
            missing = [i for i, s in enumerate(req.seed_entity_ids) if s not in found]
            if missing:
                at = f"seed_entity_ids[{missing[0]}]"
                raise NotFound(f"{at}: no entity {req.seed_entity_ids[missing[0]]!r}", field=at)
        params = self._rank_params(tenant_id, req, now, lucene, vector, seeds, viewer)
        row = self.db.read_one("search/rank", warmed=True, **params)
        for deeper in self.tuning.refetch:
            # a retriever read `fetch` candidates and the filters left fewer than `limit`: more may match further
            # down its index, so read again deeper (a round trip each, for filtered searches and windows whose
            # filters take out most of the best matches)
            if not row["starved"]:
                break
            if deeper <= params["fetch"]:
                continue
            params["fetch"] = deeper
            row = self.db.read_one("search/rank", warmed=True, **params)
        ranked = self._fuse(row["entity_hits"], row["fact_hits"], row["episode_hits"])
        if self.tuning.replies:
            ranked = self._with_replies(ranked, row["episode_hits"])
        if req.mmr:
            ranked = self._mmr(ranked, req.mmr_lambda, req.k)
        ranked = ranked[:req.k]
        records = self._records(row)
        unread = [c for c in ranked if (c.kind, c.id) not in records]    # winners the first read did not prefetch
        if unread:
            ids = {f"{kind}_ids": _ids([c.id for c in unread if c.kind == kind])
                   for kind in ("fact", "episode", "entity")}
            records.update(self._records(self.db.read_one("search/rank", warmed=True,
                                                          **{**params, "targets": [], **ids})))
        hits = [self._hit(c, records[(c.kind, c.id)], req.known_at) for c in ranked if (c.kind, c.id) in records]
        if viewer is None:
            return SearchResponse(hits=hits, degraded=degraded)
        return ViewedSearchResponse(hits=hits, degraded=degraded, withheld_consent=row["withheld_consent"] or 0,
                                    withheld_sensitive=row["withheld_sensitive"] or 0)

    def warm_up(self, tenant_id: str) -> None:
        """Run search/rank in the shapes requests send it, so that Neo4j has planned each before the first request:
        as a context window sends it (with a `Viewer`; its search has a timeout) and as `POST /v1/search` does, each
        as a first read and as the second read of winners not prefetched (no targets). Neo4j plans one plan per
        query text and parameter types (`NO_ID`), 1.3-2.5 s each when cold (docs/benchmarks/recall.md, "Cold
        plans"); `tenant_id` should hold nothing. With an embedder the query is embedded, as a request's is. Run
        inside `Database.replanning()` (`graphmem.ops.warm_up`), each shape runs plainly, which replans a plan Neo4j
        deems stale, and as `CYPHER replan=skip`, whose text Neo4j parses apart (0.5 s cold) though it runs the same
        plan. Raises what the search raises."""
        query, now = "warm up the search plans", utcnow()
        vector, lucene = self._vector(query, []), build_query(query, tenant_id)
        for req, viewer in ((SearchRequest(query=query, k=8, targets=["fact", "episode"], depth=20),
                             Viewer(session_id="warm-up", user_id="warm-up")),
                            (SearchRequest(query=query, k=10), None)):
            params = self._rank_params(tenant_id, req, now, lucene, vector, [], viewer)
            for shape in (params, {**params, "targets": []}):
                self.db.read_one("search/rank", warmed=True, **shape)

    def _rank_params(self, tenant_id: str, req: SearchRequest, now: datetime, lucene: str | None,
                     vector: list[float] | None, seeds: list[str], viewer: Viewer | None = None) -> dict:
        """Parameters of search/rank. Each retriever keeps `limit` = max(k, depth or per_retriever) hits and reads
        `fetch` candidates of this tenant only (the full-text query requires the tenant token, vector similarity is computed
        over the tenant's nodes), so the post-filters (time, status, scope) rarely starve a list; `fetch_factor`
        leaves room for them. The index call's cost grows with `fetch`: in a tenant of 100k facts the fact query
        took 13.5 / 7 / 5 ms of server time at fetch 200 / 100 / 50, so the default over-fetch is 2x. Without
        filtering only score ties at the cut differ (the LoCoMo CI slice moved from 73.11 to 72.69). Times go as
        ISO-8601 strings: packing a datetime parameter costs the driver ~40 µs. `viewer` is the `$viewer` map or
        null (`Viewer.params`); `k` bounds which withheld facts are counted. `opt` holds what a request may leave
        out, null when left out: Neo4j keeps one plan per parameter types, a null is a type of its own, and a map is
        a map whatever it holds, so every mix of filters runs on one plan (`tests/test_recall_plans.py`)."""
        limit = max(req.k, req.depth or self.tuning.per_retriever)
        scope = {"session_id": req.session_id, "user_id": req.user_id,
                 "occurred_after": req.occurred_after and req.occurred_after.isoformat(),
                 "occurred_before": req.occurred_before and req.occurred_before.isoformat()}
        opt = {"lucene": lucene, "vector": vector, "min_similarity": req.min_similarity,
               "entity_kinds": req.entity_kinds or None,
               "episodes_until": req.as_of and req.as_of.isoformat(),
               "predicates": [p.upper() for p in req.predicates] if req.predicates else None, **scope}
        return {"tenant_id": tenant_id, "targets": list(req.targets), "opt": opt,
                "seed_ids": _ids(seeds), "now": now.isoformat(),
                "as_of": (req.as_of or now).isoformat(), "known_at": (req.known_at or now).isoformat(),
                "include_superseded": req.include_superseded,
                "scoped": any(v is not None for v in scope.values()),
                "viewer": viewer.params() if viewer is not None else None, "k": req.k,
                "limit": limit, "fetch": min(self.tuning.refetch[0], limit * self.tuning.fetch_factor),
                "weights": self.tuning.weights, "rrf_k": self.tuning.rrf_k,
                "prefetch": req.k * self.tuning.prefetch_factor, "fact_ids": _ids([]), "episode_ids": _ids([]),
                "entity_ids": _ids([])}

    def _fuse(self, ent_rows, fact_rows, ep_rows) -> list[Candidate]:
        """Phase one rows of each kind -> candidates best first by RRF over every (kind, retriever) list. A row
        without an id is a node deleted (erased) while the read ran, its properties read as null: left out."""
        lists: dict[str, list[tuple[int, tuple[str, str]]]] = {}
        meta: dict[tuple[str, str], dict] = {}
        for kind, rows in (("entity", ent_rows), ("fact", fact_rows), ("episode", ep_rows)):
            for row in rows:
                if row["id"] is None:
                    continue
                key = (kind, row["id"])
                meta[key] = row
                for r in row["reasons"]:
                    lists.setdefault(f"{kind}/{r['retriever']}", []).append((r["rank"], key))
        ranked = [(name, [key for _, key in sorted(items)]) for name, items in lists.items()]
        fused = rrf(ranked, k=self.tuning.rrf_k, weights=self.tuning.weights)
        return [Candidate(key[0], key[1], meta[key]["text"], fused[key], meta[key]["reasons"])
                for key in sorted(fused, key=lambda x: (-fused[x], x))]

    @staticmethod
    def _with_replies(ranked: list[Candidate], ep_rows: list[dict]) -> list[Candidate]:
        """Episode candidates that ask a question lend their fused score to their reply (the next episode of the
        session that is not a tool's or the system's, past up to three that are, by another party: another speaker,
        or another source by role when either names no speaker; it passes the same filters; search/rank returns it
        with each episode hit), which then ranks right after its question. A reply that is a hit of its own adds
        the two scores and so ranks above its question: it both matches and answers a matching question, unless
        the vectors alone found the question: then the reply keeps the higher of the two scores (it still ranks at
        least right after its question). Every stored episode is some query's vector hit, and a question and its
        reply are near each other in embedding space, so adding the two let an off-topic pair outrank exact
        matches ("Initech" put "It moved to Altona last spring." above the Initech turns; helper-found). On LoCoMo
        with e5-small-v2 the max gave recall@10 77.3 / multi-hop 52.0 against 77.4 / 52.1 for the sum (all but 5;
        recall@5 69.1 against 68.9; the same ingest, docs/benchmarks/locomo_search.md); without an embedder there
        are no vector reasons and nothing changes. Lifting it only to its question's
        score (right after it) cost evidence recall@5 on LoCoMo 3.0 points without an embedder (62.2 -> 59.2, all
        but 5; docs/benchmarks/locomo_search.md).
        In a conversation the answer often shares no word with the question that asked for it ("Anything you're
        excited for in the adoption process?" -> "I'm thrilled to make a family for kids who need one"); on LoCoMo
        (conv-26 + conv-30, no embedder) this raised evidence recall@10 from 66.2 to 72.0. Replies listed as a
        separate RRF retriever gained only 2.5 points: a list ranks replies among themselves, not at their question."""
        reply_of = {row["id"]: row["reply"] for row in ep_rows   # a reply erased while read has no id: none
                    if row.get("reply") and row["reply"].get("id") is not None}
        if not reply_of:
            return ranked
        scored: dict[tuple[str, str], list] = {(c.kind, c.id): [c.score, float(i), c] for i, c in enumerate(ranked)}
        for i, c in enumerate(ranked):
            r = reply_of.get(c.id) if c.kind == "episode" else None
            if r is None:
                continue
            reason = {"retriever": "reply", "rank": i + 1, "score": c.score}
            slot = scored.get(("episode", r["id"]))
            if slot is None:
                scored[("episode", r["id"])] = [c.score, i + 0.5, Candidate("episode", r["id"], r["text"], c.score, [reason])]
            else:   # a hit of its own that answers a matching question: both scores, or the higher one (docstring)
                vector_only = all(x["retriever"] == "vector" for x in c.reasons)
                slot[0] = max(slot[0], c.score) if vector_only else slot[0] + c.score
                slot[1] = min(slot[1], i + 0.5)
                slot[2] = slot[2]._replace(score=slot[0], reasons=[*slot[2].reasons, reason])
        return [slot[2] for slot in sorted(scored.values(), key=lambda s: (-s[0], s[1]))]

    @staticmethod
    def _records(row: dict) -> dict[tuple[str, str], dict]:
        """The records search/rank read in full, keyed by (kind, id); each value holds the record under its kind
        ("fact", "episode", "entity"), facts also their `provenance`. A record deleted while the read projected it
        (`graphmem.store.whole`) is not there, so its hit is left out."""
        out: dict[tuple[str, str], dict] = {("fact", r["fact"]["id"]): r for r in row["facts"]
                                            if whole(r["fact"], Fact)}
        out.update({("episode", e["id"]): {"episode": e} for e in row["episodes"] if whole(e, Episode)})
        out.update({("entity", n["id"]): {"entity": n} for n in row["entities"] if whole(n, Entity)})
        return out

    @staticmethod
    def _hit(c: Candidate, row: dict, known_at: datetime | None) -> SearchHit:
        """A search hit from its candidate and record; a fact as it was believed at `known_at` (`Fact.as_known_at`)."""
        record = {k: v for k, v in row[c.kind].items() if v is not None}
        if c.kind == "fact":
            fact = Fact(**record).as_known_at(known_at)
            prov = sorted((Provenance(**p) for p in row["provenance"]), key=lambda p: (p.occurred_at, p.episode_id))
            said = [p for p in prov if p.role in SUPPORTING_ROLES]
            return SearchHit(kind="fact", id=fact.id, text=fact.statement, score=c.score, reasons=c.explain(),
                             fact=fact, episode_ids=[p.episode_id for p in said], provenance=prov,
                             occurred_at=said[0].occurred_at if said else fact.valid_from)
        if c.kind == "episode":
            ep = Episode(**record)
            return SearchHit(kind="episode", id=ep.id, text=c.text, score=c.score, reasons=c.explain(), episode=ep,
                             episode_ids=[ep.id], occurred_at=ep.occurred_at)
        return SearchHit(kind="entity", id=c.id, text=c.text, score=c.score, reasons=c.explain(), entity=Entity(**record))

    @staticmethod
    def _mmr(cands: list[Candidate], lam: float, k: int) -> list[Candidate]:
        words = {c.id: set(_WORDS.findall(c.text.lower())) for c in cands}
        by_id = {c.id: c for c in cands}
        order = mmr([c.id for c in cands], {c.id: c.score for c in cands},
                    lambda a, b: jaccard(words[a], words[b]), lam=lam, k=k)
        return [by_id[i] for i in order]
