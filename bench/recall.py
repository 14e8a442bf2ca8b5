"""Recall latency: hybrid search and 3-hop paths at growing graph sizes, 8 concurrent clients.

Synthetic CRM graphs, many tenants of the same shape (per tenant: 50 people, 5 organisations, 20 episodes and
200 facts: WORKS_AT, HAS_TITLE, REPORTS_TO, KNOWS, each derived from an episode). They are bulk-loaded by a direct
UNWIND loader (cypher/recall/bench_load_*.cypher, the same node/edge shape as TemporalGraph.assert_facts writes,
without the temporal-rule reads) because assert_facts is too slow for 1M facts in the time available. Sizes grow by
adding tenants; full-text queries require the tenant inside Lucene and vector similarity is per tenant, so latency
should not grow with other tenants' data. No embedder
(no remote call, no query embedding) in the timed path. Runs on its own LocalNeo4j (heap 3g, page cache 4g:
Neo4j's rule of thumb is store size + expected growth + 10% (Knowledge Base, "How to estimate initial memory
configuration"), and the 1M-fact store is 2.0 GB; with 2g the 3-hop call cost ~10% more Neo4j CPU at 1M,
docs/benchmarks/recall.md).

usage: python bench/recall.py [--sizes 10000,100000,1000000] [--seconds 20] [--clients 8]
"""
from __future__ import annotations

import argparse
import gc
import json
import re
import random
import statistics
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import neo4j_for_bench  # noqa: E402
from bench.locomo_common import ROOT, machine  # noqa: E402
from graphmem.graph import TemporalGraph  # noqa: E402
from graphmem.identifiers import name_key  # noqa: E402
from graphmem.models import new_id  # noqa: E402
from graphmem.recall.models import SearchRequest  # noqa: E402
from graphmem.recall.service import RecallService  # noqa: E402
from graphmem.store import Database, tenant_token  # noqa: E402
from graphmem.store.fulltext import search_terms  # noqa: E402
from graphmem.store.schema import apply_schema  # noqa: E402

FIRST = ["Dana", "Bob", "Carol", "Eve", "Frank", "Grace", "Heidi", "Ivan", "Judy", "Mallory", "Niaj", "Olivia",
         "Peggy", "Rupert", "Sybil", "Trent", "Victor", "Walter", "Yara", "Zoe"]
LAST = ["Smith", "Lee", "Jones", "Adams", "Wu", "Garcia", "Khan", "Novak", "Rossi", "Silva", "Tanaka", "Weber"]
ORGS = ["Globex", "Initech", "Acme", "Umbrella", "Hooli", "Stark", "Wayne", "Wonka", "Cyberdyne", "Tyrell"]
TITLES = ["CFO", "CEO", "VP Sales", "Engineer", "Buyer", "Head of Procurement", "CTO", "Analyst"]
FACTS_PER_TENANT = 200
HEAP, PAGECACHE = "3g", "4g"
T0 = datetime(2023, 1, 1, tzinfo=timezone.utc)


def tenant_rows(rng: random.Random) -> tuple[list, list, list, list[str]]:
    people = [{"id": new_id(), "kind": "Person", "name": f"{rng.choice(FIRST)} {rng.choice(LAST)} {i}"} for i in range(50)]
    orgs = [{"id": new_id(), "kind": "Organization", "name": f"{o} {rng.randint(1, 999)}"} for o in rng.sample(ORGS, 5)]
    for e in people + orgs:
        e["name_key"] = name_key(e["name"])
    eps = [{"id": new_id(), "key": f"k{i}", "occurred_at": T0 + timedelta(days=i),
            "content": f"Meeting notes {i}: {rng.choice(people)['name']} discussed the {rng.choice(orgs)['name']} "
                       f"deal with {rng.choice(people)['name']}; budget review and next steps."} for i in range(20)]
    facts = []

    def fact(pred, s, o=None, value=None):
        stmt = {"WORKS_AT": f"{s['name']} works at {o and o['name']}", "REPORTS_TO": f"{s['name']} reports to {o and o['name']}",
                "KNOWS": f"{s['name']} knows {o and o['name']}", "HAS_TITLE": f"{s['name']} has the title {value}"}[pred]
        facts.append({"id": new_id(), "predicate": pred, "subject_id": s["id"], "object_id": o["id"] if o else None,
                      "value": value, "statement": stmt, "valid_from": T0 + timedelta(days=rng.randint(0, 300)),
                      "episode_id": rng.choice(eps)["id"]})
    for p in people:
        fact("WORKS_AT", p, rng.choice(orgs))
        fact("HAS_TITLE", p, value=rng.choice(TITLES))
    for p in people[5:]:
        fact("REPORTS_TO", p, rng.choice(people[:5]))
    while len(facts) < FACTS_PER_TENANT:
        a, b = rng.sample(people, 2)
        fact("KNOWS", a, b)
    return people + orgs, eps, facts, [p["id"] for p in people]


def with_search_terms(tenant: str, ents: list, eps: list, facts: list) -> None:
    """Give `tenant_rows`' rows the `search_terms` the full-text indexes hold (graphmem.store.fulltext), as the
    product's write path does: entities from their name, episodes from their content, facts from their statement."""
    for rows, field in ((ents, "name"), (eps, "content"), (facts, "statement")):
        for r in rows:
            r["search_terms"] = search_terms(tenant, r[field])


def load(db: Database, tenants: list[str], seeds: dict, rng: random.Random) -> float:
    t0 = time.perf_counter()
    now = datetime.now(timezone.utc)
    for i, t in enumerate(tenants):
        ents, eps, facts, people = tenant_rows(rng)
        with_search_terms(t, ents, eps, facts)
        def work(tx):
            tx.run("recall/bench_load_entities", tenant_id=t, tenant_token=tenant_token(t), rows=ents, now=now)
            tx.run("recall/bench_load_episodes", tenant_id=t, tenant_token=tenant_token(t), rows=eps, now=now)
            tx.run("recall/bench_load_facts", tenant_id=t, tenant_token=tenant_token(t), rows=facts, now=now)
        db.write(work)
        seeds[t] = [e for e in ents if e["kind"] == "Person"]
        if i % 500 == 0:
            print(f"  loaded {i}/{len(tenants)} tenants", flush=True)
    return time.perf_counter() - t0


def measure(fn, seconds: float, clients: int) -> dict:
    lat: list[float] = []
    lock = threading.Lock()
    stop = time.monotonic() + seconds

    def client(seed):
        rng = random.Random(seed)
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            fn(rng)
            dt = (time.perf_counter() - t0) * 1000
            with lock:
                lat.append(dt)
    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    lat.sort()
    return {"requests": len(lat), "p50_ms": round(statistics.median(lat), 1),
            "p95_ms": round(lat[int(0.95 * (len(lat) - 1))], 1), "throughput_rps": round(len(lat) / seconds, 1)}


FULL_SIZES = "10000,100000,1000000"
RESULTS = ROOT / "bench/results/recall.json"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default=FULL_SIZES, help="fact counts; only a run of the full sizes into the default "
                    "--out rewrites the table in docs/benchmarks/recall.md (a partial run is a probe, not a record)")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--warmup-s", type=float, default=60.0,
                    help="unmeasured load before each measurement, per size: a fresh JVM spends its first minute "
                         "JIT-compiling (search at 10k facts: p50 67 ms after 8 s of warm-up, 17 ms after 60 s)")
    ap.add_argument("--out", default=str(RESULTS))
    a = ap.parse_args()
    results = []
    with neo4j_for_bench(heap=HEAP, pagecache=PAGECACHE) as (settings, _):
        settings = settings.model_copy(update={"embedder": "none"})
        db = Database(settings.neo4j_uri, None, max_connection_pool_size=32)
        apply_schema(db, settings.embedding_dimension)
        recall = RecallService(db, TemporalGraph(db, settings), embedder=None)
        rng = random.Random(7)
        seeds: dict[str, list] = {}
        loaded = 0
        for size in [int(x) for x in a.sizes.split(",")]:
            n_new = size // FACTS_PER_TENANT - len(seeds)
            new = [f"bench-{len(seeds) + i}" for i in range(n_new)]
            print(f"size {size}: loading {n_new} tenants", flush=True)
            load_s = load(db, new, seeds, rng)
            loaded += n_new * FACTS_PER_TENANT
            time.sleep(2)  # let the full-text indexes refresh
            gc.freeze()   # the loaded seeds are harness data: keep them out of collections, as api/app.py does
            tenants = list(seeds)

            def search(r):
                t = r.choice(tenants)
                person = r.choice(seeds[t])
                recall.search(t, SearchRequest(query=f"who does {person['name'].rsplit(' ', 1)[0]} report to?", k=10))

            def hops(r):
                t = r.choice(tenants)
                recall.paths_around(t, r.choice(seeds[t])["id"], max_hops=3, limit=50)
            measure(search, a.warmup_s, a.clients)   # warm-up: a fresh Neo4j is still compiling its hot paths
            measure(hops, a.warmup_s, a.clients)
            row = {"facts": loaded, "tenants": len(tenants), "facts_per_tenant": FACTS_PER_TENANT,
                   "entities": len(tenants) * 55, "episodes": len(tenants) * 20, "load_s": round(load_s, 1),
                   "search": measure(search, a.seconds, a.clients), "recall_3hop": measure(hops, a.seconds, a.clients)}
            print(json.dumps(row), flush=True)
            results.append(row)
        db.close()
    # written once every size is measured: an interrupted run leaves the recorded figures as they were (its rows
    # are in its output, one JSON line per size)
    Path(a.out).write_text(json.dumps({**machine(), "benchmark": "recall",
                                       "parameters": {"clients": a.clients, "seconds_per_measure": a.seconds,
                                                      "warmup_s_per_measure": a.warmup_s,
                                                      "loader": "direct UNWIND (cypher/recall/bench_load_*)",
                                                      "embedder": "none", "search_k": 10,
                                                      "recall_max_hops": 3, "recall_limit": 50,
                                                      "neo4j": f"LocalNeo4j 5.26, heap {HEAP}, "
                                                               f"page cache {PAGECACHE}"},
                                       "units": {"latency": "ms", "throughput": "requests/s", "load": "s"},
                                       "results": results}, indent=1))
    if a.sizes == FULL_SIZES and Path(a.out).resolve() == RESULTS.resolve():
        write_doc(json.loads(Path(a.out).read_text()))
    else:
        print(f"a partial run or another --out: {DOC.relative_to(ROOT)} left as it is", flush=True)


DOC = ROOT / "docs/benchmarks/recall.md"
MARK = re.compile(r"(<!-- results -->\n).*?(<!-- /results -->)", re.S)


def write_doc(out: dict) -> None:
    """Replace the generated block of docs/benchmarks/recall.md (between the results markers) with this run's table,
    the scale ratio and the target check; the notes around it are written by hand."""
    rows = out["results"]
    lines = [f"Commit `{out['commit'][:12]}`, {out['date_utc']}, {out['machine']['cpus']} CPUs "
             f"({out['machine'].get('cpu_model', 'CPU model not recorded')}), load average "
             f"{out['machine'].get('load_average_1m')} at the end. One run, {out['parameters']['clients']} clients, "
             f"{out['parameters']['seconds_per_measure']:g} s per measurement after "
             f"{out['parameters'].get('warmup_s_per_measure', 0):g} s of warm-up.", "",
             "| facts | tenants | entities | episodes | load (s) | search p50 / p95 (ms) | search req/s | "
             "3-hop p50 / p95 (ms) | 3-hop req/s |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        s, h = r["search"], r["recall_3hop"]
        lines.append(f"| {r['facts']:,} | {r['tenants']:,} | {r['entities']:,} | {r['episodes']:,} | {r['load_s']} | "
                     f"{s['p50_ms']} / {s['p95_ms']} | {s['throughput_rps']} | {h['p50_ms']} / {h['p95_ms']} | "
                     f"{h['throughput_rps']} |")
    first, last = rows[0], rows[-1]
    ratio_s = last["search"]["p95_ms"] / first["search"]["p95_ms"]
    ratio_h = last["recall_3hop"]["p95_ms"] / first["recall_3hop"]["p95_ms"]
    lines += ["", f"- Scale: p95 at {last['facts']:,} / p95 at {first['facts']:,} facts = {ratio_s:.2f} (search) and "
              f"{ratio_h:.2f} (3-hop): target <= 2, {'met' if max(ratio_s, ratio_h) <= 2 else 'missed'}.",
              f"- Absolute at {last['facts']:,} facts: search p95 {last['search']['p95_ms']} ms (target <= 40), "
              f"3-hop p95 {last['recall_3hop']['p95_ms']} ms (target <= 30): "
              f"{'met' if last['search']['p95_ms'] <= 40 and last['recall_3hop']['p95_ms'] <= 30 else 'missed'}."]
    checks = []
    for name, key, limit in (("search", "search", 40), ("3-hop", "recall_3hop", 30)):
        worst = max(rows, key=lambda r: r[key]["p95_ms"])
        checks.append(f"{name} p95 at most {worst[key]['p95_ms']} ms, at {worst['facts']:,} facts (target <= {limit}): "
                      f"{'met' if worst[key]['p95_ms'] <= limit else 'missed'}")
    lines.append("- At every size: " + "; ".join(checks) + ".")
    DOC.write_text(MARK.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(2), DOC.read_text()))


if __name__ == "__main__":
    main()
