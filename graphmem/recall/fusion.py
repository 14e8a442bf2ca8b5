"""Rank fusion and diversification.

* Reciprocal rank fusion: score(d) = sum over ranked lists r of w_r / (k + rank_r(d)), k = 10 (`RRF_K`).
  Cormack, Clarke & Büttcher, "Reciprocal Rank Fusion outperforms Condorcet and individual Rank Learning
  Methods", SIGIR 2009. Weights w_r (default 1) are the usual weighted variant.
* Maximal marginal relevance: pick next argmax λ·rel(d) - (1-λ)·max_{s in selected} sim(d, s).
  Carbonell & Goldstein, "The use of MMR, diversity-based reranking for reordering documents and producing
  summaries", SIGIR 1998. Here rel is the fused score scaled to [0, 1] and sim is the Jaccard overlap of word sets.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

RRF_K = 10
"""The constant k of RRF. Cormack et al. (2009) found k = 60 near-optimal across TREC collections; on LoCoMo
(seven conversations, evidence recall@10 on "all but 5", bench/locomo_search.py's setting, 2026-11-30) a smaller k,
which lets a hit near the top of one list outrank hits that are middling in several, found more:
k = 60 / 30 / 20 / 15 / 10 / 5 gave 73.6 / 74.6 / 75.6 / 76.0 / 76.2 / 76.1 with the local embedder (then
bge-small-en-v1.5; four lists)
and 68.8 / 69.2 / 69.2 / 70.0 / 70.9 / 71.4 without (two lists); 10 is best or near it in both."""


def rrf(ranked_lists: Iterable[tuple[str, Sequence[Hashable]]], *, k: int = RRF_K,
        weights: dict[str, float] | None = None) -> dict[Hashable, float]:
    """Fuse ranked lists. `ranked_lists`: (list name, items best first). Returns {item: fused score}.
    `weights` maps a list name to w_r (missing names weigh 1.0)."""
    weights = weights or {}
    out: dict[Hashable, float] = {}
    for name, items in ranked_lists:
        w = weights.get(name, 1.0)
        for rank, item in enumerate(items, start=1):
            out[item] = out.get(item, 0.0) + w / (k + rank)
    return out


def jaccard(a: set[str], b: set[str]) -> float:
    """|a ∩ b| / |a ∪ b|, 0.0 for two empty sets."""
    return len(a & b) / len(a | b) if a or b else 0.0


def mmr(items: Sequence[Hashable], relevance: dict[Hashable, float], similarity: Callable[[Hashable, Hashable], float],
        *, lam: float = 0.7, k: int | None = None) -> list[Hashable]:
    """Re-rank `items` by maximal marginal relevance (see module docstring); returns the first `k` (default all).
    `relevance` is scaled to [0, 1] by its maximum; `lam` = 1 is pure relevance, 0 pure diversity."""
    k = len(items) if k is None else min(k, len(items))
    top = max((relevance[i] for i in items), default=1.0) or 1.0
    pool, chosen = list(items), []
    nearest = dict.fromkeys(pool, 0.0)     # each item's highest similarity to one chosen so far
    while pool and len(chosen) < k:
        best = max(pool, key=lambda d: lam * relevance[d] / top - (1 - lam) * nearest[d])
        chosen.append(best)
        pool.remove(best)
        for d in pool:                     # k x n similarities in all, not k^2 x n
            nearest[d] = max(nearest[d], similarity(d, best))
    return chosen
