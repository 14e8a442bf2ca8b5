"""LoCoMo evidence recall of graphmem search (quality benchmark).

Each conversation of locomo_dev7 is ingested into its own tenant (bench/locomo_common.py: turns as episodes,
observations as OBSERVED facts derived from their turns); each question is answered by `services.recall.search`
(facts + episodes; full-text, and vector when an embedder is configured; RRF; no seed entities, so no graph
proximity); hits become ranked dia_ids (a fact expands to its source turns). Scored only by
/work/shared/tools/locomo_recall.py, next to its BM25-over-turns baseline, for each embedder mode.

Each embedder mode runs on its own private LocalNeo4j (temp dir, free port; bench/common.neo4j_for_bench), started
and stopped here, unless --uri names an existing server. Lucene's BM25 statistics (document count, average length)
span everything in a full-text index, so on a shared server the figures depend on the other data there (on the
dev server, holding ~20k other episodes, recall@10 moved by 0.0 / 0.3 points without / with the local embedder).

usage: python bench/locomo_search.py [--uri bolt://...] [--embedders none,local] [--samples N] [--questions N]
       [--neighbours] [--out bench/results/locomo_search.json]
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import locomo_common as lc  # noqa: E402
from bench.common import neo4j_for_bench  # noqa: E402
from graphmem.recall.models import SearchRequest  # noqa: E402
from graphmem.services import Services  # noqa: E402
from graphmem.settings import Settings  # noqa: E402
from graphmem.store import Database  # noqa: E402
from graphmem.store.schema import apply_schema  # noqa: E402

KS = [5, 10, 25]
CATS = ["multi_hop", "temporal", "open_domain", "single_hop", "adversarial", "all_but_5", "all"]


def run_mode(db: Database, settings: Settings, data: list[dict], embedder: str, *, questions: int | None,
             neighbours: bool, k: int = 50, log=print) -> tuple[Path, dict]:
    """Ingest every sample into fresh tenants with this embedder, answer every question; returns (predictions
    JSONL path, timings)."""
    services = Services(db, settings.model_copy(update={"embedder": embedder}))
    run = uuid.uuid4().hex[:8]
    pred = Path(tempfile.mkdtemp()) / f"pred-{embedder}.jsonl"
    t_ingest = t_search = 0.0
    n_q = 0
    with pred.open("w") as fh:
        for sample in data:
            t0 = time.perf_counter()
            ing = lc.ingest(services.graph, f"locomo-{run}-{sample['sample_id']}", sample)
            t_ingest += time.perf_counter() - t0
            order = [t["dia_id"] for t in lc.turns(sample)]
            adj = {d: [x for x in (order[i - 1] if i else None, order[i + 1] if i + 1 < len(order) else None) if x]
                   for i, d in enumerate(order)} if neighbours else None
            qs = lc.questions(sample)[:questions] if questions else lc.questions(sample)
            t0 = time.perf_counter()
            for qi, q in qs:
                res = services.recall.search(ing.tenant_id, SearchRequest(query=q["question"], k=k,
                                                                          targets=["fact", "episode"]))
                ranked = lc.ranked_dia_ids(res.hits, ing.dia_of, neighbours=adj)
                fh.write(json.dumps({"sample_id": sample["sample_id"], "qa_index": qi, "ranked": ranked}) + "\n")
                n_q += 1
            t_search += time.perf_counter() - t0
            log(f"[{embedder}] {sample['sample_id']}: {len(ing.episode_of)} turns, {ing.facts} facts, {len(qs)} questions")
    return pred, {"ingest_s": round(t_ingest, 1), "search_s": round(t_search, 1), "questions": n_q,
                  "search_mean_ms": round(1000 * t_search / max(n_q, 1), 1)}


def table(results: dict) -> str:
    lines = ["| run | metric | " + " | ".join(CATS) + " |", "|---|---|" + "---|" * len(CATS)]
    for name, res in results.items():
        for kk in KS:
            row = res["results"].get(f"recall@{kk}", {})
            lines.append(f"| {name} | recall@{kk} | " + " | ".join(
                f"{row[c]['percent']:.1f}" if c in row else "-" for c in CATS) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri", help="an existing Neo4j server (default: a private one per embedder mode)")
    ap.add_argument("--embedders", default="none,local")
    ap.add_argument("--samples", type=int, default=None, help="first N conversations only")
    ap.add_argument("--questions", type=int, default=None, help="first N questions per conversation only")
    ap.add_argument("--neighbours", action="store_true", help="append each hit's adjacent turns as a second tier")
    ap.add_argument("--out", default=str(lc.ROOT / "bench/results/locomo_search.json"))
    a = ap.parse_args()
    data = lc.load()[: a.samples] if a.samples else lc.load()
    subset = Path(tempfile.mkdtemp()) / "locomo_subset.json"
    subset.write_text(json.dumps(data))
    results, timings, servers, models = {}, {}, {}, {}
    tmp = Path(tempfile.mkdtemp())
    results["bm25 baseline (scorer)"] = lc.bm25_baseline(tmp / "bm25.json", subset)
    for emb in [e for e in a.embedders.split(",") if e]:
        with neo4j_for_bench(a.uri, heap="1g", pagecache="512m") as (settings, servers[emb]):
            models[emb] = {"local": settings.local_model, "openai": settings.embedding_model}.get(emb)
            db = Database.from_settings(settings)
            apply_schema(db, settings.embedding_dimension)
            try:
                pred, timings[emb] = run_mode(db, settings, data, emb, questions=a.questions, neighbours=a.neighbours)
            finally:
                db.close()
        results[f"graphmem, embedder={emb}"] = lc.score(pred, tmp / f"{emb}.json", subset)
        print(table({f"graphmem, embedder={emb}": results[f"graphmem, embedder={emb}"]}))
    meta = lc.machine()
    out = {**meta, "benchmark": "locomo_search", "unit": "percent of evidence turns found (recall@k)",
           "parameters": {"data": str(lc.DATA), "samples": [s["sample_id"] for s in data],
                          "questions_per_sample": a.questions, "search_k": 50, "targets": ["fact", "episode"],
                          "neighbours": a.neighbours, "scorer": str(lc.SCORER), "neo4j": servers,
                          "embedding_model": models},
           "results": {name: r["results"] for name, r in results.items()},
           "scorable": {name: r["scorable"] for name, r in results.items()},
           "missing_predictions": {name: r["missing_predictions"] for name, r in results.items()},
           "timings": timings}
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(out, indent=1))
    print(table(results))
    if not a.samples and not a.questions:
        write_doc(out, table(results))
    return out, table(results)


DOC = lc.ROOT / "docs/benchmarks/locomo_search.md"
MARK = re.compile(r"(<!-- results -->\n).*?(<!-- /results -->)", re.S)


def _verdict(value: float, target: float) -> str:
    """71.2, 75 -> "71.2 (target 75: missed)"."""
    return f"{value:.1f} (target {target:g}: {'met' if value >= target else 'missed'})"


def write_doc(out: dict, tab: str) -> None:
    """Replace the generated block of docs/benchmarks/locomo_search.md (between the results markers) with this
    run's table and target check; the notes around it are written by hand."""
    lines = [f"Run {out['date_utc']} at commit {out['commit'][:10]} ({out['machine']['cpus']} CPUs), "
             f"{len(out['parameters']['samples'])} conversations, {out['scorable']['bm25 baseline (scorer)']} "
             "scorable questions." + "".join(f" Embedder {e}: {m}." for e, m in
                                             out["parameters"].get("embedding_model", {}).items() if m),
             "", tab, ""]
    for name, res in out["results"].items():
        if name.startswith("graphmem"):
            r10, mh = res["recall@10"]["all_but_5"]["percent"], res["recall@10"]["multi_hop"]["percent"]
            lines.append(f"- {name}: recall@10 all-but-5 {_verdict(r10, 75)}, multi-hop {_verdict(mh, 50)}")
    DOC.write_text(MARK.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), DOC.read_text()))


if __name__ == "__main__":
    main()
