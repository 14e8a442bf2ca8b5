"""Context benchmark: window assembly latency (server side, in-process `ContextService.assemble`, no remote LLM or
embedding call) with 8 concurrent sessions over a graph of --facts facts, and tokens in the window compared to
resending the whole history on LoCoMo conversations (/work/shared/benchdata/locomo/locomo_dev7.json).

Starts its own LocalNeo4j (heap 3g, page cache 2g, temp dir, free port) unless --uri is given, and stops it after.
Writes bench/results/context.json and docs/benchmarks/context.md.

usage: python bench/context.py [--uri bolt://...] [--facts 50000] [--sessions 8] [--calls 40] [--locomo 7]
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import neo4j_for_bench, pct  # noqa: E402
from bench.locomo_common import load as load_locomo, machine, session_time  # noqa: E402

from graphmem.context.models import ContextRequest, PinUpdate, ToolSchema, TurnEpisode, TurnIn  # noqa: E402
from graphmem.models import EntityRef, EpisodeIn, FactIn  # noqa: E402
from graphmem.services import Services  # noqa: E402
from graphmem.store import Database  # noqa: E402
from graphmem.store.schema import apply_schema  # noqa: E402
from graphmem.tokens import TokenCounter  # noqa: E402

UTC = timezone.utc
T0 = datetime(2024, 1, 1, tzinfo=UTC)
TOPICS = ["pricing", "renewal", "security review", "onboarding", "refund", "integration", "SSO", "invoice",
          "data export", "support plan", "latency", "migration"]
POLICY = "You are Acme's account assistant. Cite facts by id. Never promise discounts above 15%."
MODEL = "gpt-4"


def load_facts(svc: Services, tenant: str, n: int, batch: int = 1000) -> dict:
    """n INTERESTED_IN / WORKS_AT facts about n/4 people at n/40 companies, each with an episode as provenance."""
    started = time.perf_counter()
    done = 0
    while done < n:
        size = min(batch, n - done)
        ep, _ = svc.graph.append_episode(tenant, EpisodeIn(content=f"CRM import batch {done // batch}",
                                                           occurred_at=T0 + timedelta(seconds=done), kind="event",
                                                           source="system", idempotency_key=f"load-{done}"))
        facts = []
        for i in range(done, done + size):
            person = EntityRef(kind="Person", name=f"Person {i // 4}", email=f"p{i // 4}@example{i % 97}.com")
            if i % 4 == 0:
                facts.append(FactIn(subject=person, predicate="WORKS_AT", episode_id=ep.id, source="system",
                                    object=EntityRef(kind="Organization", name=f"Company {i // 40}")))
            else:
                facts.append(FactIn(subject=person, predicate="INTERESTED_IN", episode_id=ep.id, source="system",
                                    value=f"{TOPICS[i % len(TOPICS)]} {i % 13}"))
        svc.graph.assert_facts(tenant, facts)
        done += size
        if done % (batch * 10) == 0:
            print(f"  facts {done}/{n} ({done / (time.perf_counter() - started):.0f}/s)", flush=True)
    return {"facts_loaded": n, "load_facts_per_s": round(n / (time.perf_counter() - started), 1)}


def prepare_session(ctx, tenant: str, sid: str, turns: int) -> None:
    """A support session: pins, `turns` turns, compacted at least once (small threshold in the bench settings)."""
    for i in range(turns):
        pins = [PinUpdate(key="order_id", value={"type": "order_id", "value": f"A-{sid[-4:]}"}),
                PinUpdate(key="amount", value={"type": "amount", "value": "129.99"}),
                PinUpdate(key="currency", value={"type": "currency", "value": "EUR"})] if i == 0 else []
        ctx.append_turn(tenant, sid, TurnIn(idempotency_key=f"{sid}-{i}", user_id=f"user-{sid}", pins=pins, episodes=[
            TurnEpisode(role="user", content=f"Question {i} about {TOPICS[i % len(TOPICS)]} for our team of {i + 3}.",
                        occurred_at=T0 + timedelta(minutes=2 * i)),
            TurnEpisode(role="assistant", content=f"Answer {i}: here is what we know about "
                        f"{TOPICS[(i + 1) % len(TOPICS)]} and the next steps for your account.",
                        occurred_at=T0 + timedelta(minutes=2 * i + 1))]))
    ctx.wait_for_compaction(tenant, sid)


def bench_latency(svc: Services, tenant: str, sessions: int, calls: int) -> dict:
    ctx = svc.context
    sids = [f"bench-{k:04d}" for k in range(sessions)]
    for sid in sids:
        prepare_session(ctx, tenant, sid, 30)
    tools = [ToolSchema(name=f"tool_{t.replace(' ', '_')}", description=f"work with {t}") for t in TOPICS]
    lat: list[float] = []
    degraded = 0
    lock = threading.Lock()

    def run(sid: str) -> None:
        nonlocal degraded
        for c in range(calls):
            req = ContextRequest(query=f"who is interested in {TOPICS[c % len(TOPICS)]}", budget_tokens=4000,
                                 model=MODEL, system_policy=POLICY, goal="Renew the account", tools=tools)
            t = time.perf_counter()
            w = ctx.assemble(tenant, sid, req)
            dt = (time.perf_counter() - t) * 1000
            with lock:
                lat.append(dt)
                degraded += bool(w.degraded and any(d.source == "search" for d in w.degraded))
    for sid in sids[:2]:                      # warm-up (caches, query plans)
        run(sid)
    lat.clear()
    degraded = 0
    threads = [threading.Thread(target=run, args=(sid,)) for sid in sids]
    started = time.perf_counter()
    [t.start() for t in threads]
    [t.join() for t in threads]
    wall = time.perf_counter() - started
    return {"assemble_p50_ms": round(statistics.median(lat), 2), "assemble_p95_ms": round(pct(lat, 95), 2),
            "assemble_max_ms": round(max(lat), 2), "assemble_calls": len(lat),
            "assemble_per_s": round(len(lat) / wall, 1), "search_degraded_windows": degraded}


def bench_locomo(svc: Services, n: int, budget: int) -> dict:
    """Append each LoCoMo conversation as one long thread, one turn per LoCoMo session; after each, load the window
    (query = the next session's first line) and compare its tokens to the whole history rendered as raw turns."""
    ctx = svc.context
    counter = TokenCounter.for_model(MODEL)
    per_conv = []
    ratios = []
    for sample in load_locomo()[:n]:
        tenant = f"bench-locomo-{sample['sample_id']}-{uuid.uuid4().hex[:6]}"
        conv = sample["conversation"]
        keys = sorted((k for k in conv if k.startswith("session_") and not k.endswith("date_time")
                       and isinstance(conv[k], list) and conv.get(f"{k}_date_time")), key=lambda k: int(k.split("_")[1]))
        history = 0
        last = None
        for si, key in enumerate(keys):
            start = session_time(conv[f"{key}_date_time"])
            eps = []
            for ti, t in enumerate(conv[key]):
                text = t["text"] + (f" [shares {t['blip_caption']}]" if t.get("blip_caption") else "")
                eps.append(TurnEpisode(role="user", speaker=t["speaker"], content=text,
                                       occurred_at=start + timedelta(seconds=ti)))
            for e in eps:
                history += counter.count(f"[{e.occurred_at:%Y-%m-%dT%H:%M:%SZ}] user ({e.speaker}): {e.content}\n")
            ctx.append_turn(tenant, "thread", TurnIn(idempotency_key=key, user_id="locomo", episodes=eps))
            ctx.wait_for_compaction(tenant, "thread", timeout_s=300)
            nxt = conv[keys[si + 1]][0]["text"] if si + 1 < len(keys) else conv[key][-1]["text"]
            w = ctx.assemble(tenant, "thread", ContextRequest(query=nxt, budget_tokens=budget, model=MODEL,
                                                              system_policy=POLICY))
            ratios.append(w.total_tokens / history)
            last = (w.total_tokens, history, w.summary_rev)
        per_conv.append({"sample": sample["sample_id"], "sessions": len(keys), "history_tokens": last[1],
                         "window_tokens": last[0], "summary_rev": last[2]})
    total_hist = sum(c["history_tokens"] for c in per_conv)
    total_win = sum(c["window_tokens"] for c in per_conv)
    return {"locomo_conversations": len(per_conv), "locomo_final_history_tokens_mean": round(total_hist / len(per_conv)),
            "locomo_final_window_tokens_mean": round(total_win / len(per_conv)),
            "locomo_final_window_to_history": round(total_win / total_hist, 4),
            "locomo_window_to_history_median_all_turns": round(statistics.median(ratios), 4),
            "per_conversation": per_conv}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--uri")
    ap.add_argument("--facts", type=int, default=50_000)
    ap.add_argument("--sessions", type=int, default=8)
    ap.add_argument("--calls", type=int, default=40)
    ap.add_argument("--locomo", type=int, default=7)
    ap.add_argument("--budget", type=int, default=4000)
    args = ap.parse_args()
    with neo4j_for_bench(args.uri) as (settings, neo4j):
        settings = settings.model_copy(update={"embed_on_write": False, "llm_base_url": None, "llm_api_key": None,
                                               "embedder": "none", "compaction_threshold_tokens": 600,
                                               "compaction_keep_tokens": 250})
        db = Database.from_settings(settings)
        figures: dict = {}
        try:
            apply_schema(db, settings.embedding_dimension)
            svc = Services(db, settings)
            tenant = f"bench-ctx-{uuid.uuid4().hex[:6]}"
            print(f"loading {args.facts} facts ...", flush=True)
            figures.update(load_facts(svc, tenant, args.facts))
            print("assembly latency ...", flush=True)
            figures.update(bench_latency(svc, tenant, args.sessions, args.calls))
            print("LoCoMo tokens ...", flush=True)
            svc_locomo = Services(db, settings.model_copy(update={"compaction_threshold_tokens": 3000,
                                                                   "compaction_keep_tokens": 1000}))
            locomo = bench_locomo(svc_locomo, args.locomo, args.budget)
            svc.context.close()
            svc_locomo.context.close()
        finally:
            db.close()
    units = {"facts_loaded": "facts", "load_facts_per_s": "facts per second", "assemble_p50_ms": "ms",
             "assemble_p95_ms": "ms", "assemble_max_ms": "ms", "assemble_calls": "calls",
             "assemble_per_s": "windows per second", "search_degraded_windows": "windows",
             "locomo_conversations": "conversations", "locomo_final_history_tokens_mean": "tokens",
             "locomo_final_window_tokens_mean": "tokens", "locomo_final_window_to_history": "ratio",
             "locomo_window_to_history_median_all_turns": "ratio"}
    per_conv = locomo.pop("per_conversation")
    figures.update(locomo)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    result = {"benchmark": "context", "commit": commit, "date": datetime.now(UTC).isoformat(timespec="seconds"),
              "machine": machine(), "neo4j": neo4j,
              "parameters": {**vars(args), "model": MODEL, "tail_turns_per_session": 60,
                             "compaction_threshold_tokens": 600, "search_timeout_s": settings.context_search_timeout_s},
              "figures": {k: {"value": v, "unit": units[k]} for k, v in figures.items()},
              "locomo_per_conversation": per_conv,
              "targets": {"assemble_p95_ms": {"max": 50, "at_facts": 1_000_000}}}
    (ROOT / "bench" / "results").mkdir(exist_ok=True)
    (ROOT / "bench" / "results" / "context.json").write_text(json.dumps(result, indent=2) + "\n")
    write_md(result)
    print(json.dumps(result["figures"], indent=2))


def write_md(r: dict) -> None:
    f = r["figures"]
    p = r["parameters"]
    m = r["machine"]["machine"]
    rows = "\n".join(f"| {k} | {v['value']} | {v['unit']} |" for k, v in f.items())
    conv = "\n".join(f"| {c['sample']} | {c['sessions']} | {c['history_tokens']} | {c['window_tokens']} | "
                     f"{c['summary_rev']} |" for c in r["locomo_per_conversation"])
    md = f"""# Context assembly benchmark

Commit `{r['commit']}`, {r['date']}, {m['cpus']} CPUs ({m['cpu_model']}), {m['ram_gib']} GiB RAM,
{r['neo4j']}.

Command: `python bench/context.py --facts {p['facts']} --sessions {p['sessions']} --calls {p['calls']} --locomo {p['locomo']}`

| figure | value | unit |
|---|---|---|
{rows}

Window tokens vs resending the whole history, LoCoMo dev7 (one long thread per conversation, one turn per LoCoMo
session, window budget {p['budget']} tokens, query = the next session's first line), at the end of each conversation:

| sample | sessions | history tokens | window tokens | summary revision |
|---|---|---|---|---|
{conv}

## Notes
- Outcome: p95 {f['assemble_p95_ms']['value']} ms against a 50 ms target - {"missed" if f['assemble_p95_ms']['value'] > 50 else "met"}
  at this size. In {f['search_degraded_windows']['value']} of {f['assemble_calls']['value']} windows recall search
  passed its {p['search_timeout_s']} s timeout and was dropped (marked degraded), so the p50 includes that wait. The
  rest is the graph read (one query) plus the tier walk in Python (tiktoken counts per piece, pydantic models) with
  8 threads sharing one process's GIL and 2 cores with Neo4j and other engineers' runs. Not yet profiled per stage
  on the private server; see the report for suspected costs.
- Latency is server side: `ContextService.assemble` in-process (graph read of session, pins, summary and tail, recall
  search over the whole tenant with full-text only - no embedder, no LLM - and the tier walk with tiktoken counts),
  {p['sessions']} threads each on its own session, {p['calls']} windows each after a warm-up. HTTP adds the FastAPI
  and JSON cost on top.
- Target: p95 <= 50 ms at 1,000,000 facts. This run loaded {f['facts_loaded']['value']} facts: loading goes through
  `TemporalGraph.assert_facts` (entity resolution and temporal rules per fact) at the rate above, so 1M facts
  would need far longer than the bounded run this shared 2-core machine allows. The 1M figure is not measured.
- `search_degraded_windows` counts windows where recall search passed its per-source timeout
  ({p['search_timeout_s']} s) and the window was built without it (pins and tail still present).
- The LoCoMo window includes the system policy, the raw tail, the current summary revision and retrieved episodes up to
  the budget, so the ratio falls as the conversation grows; the history figure is every turn rendered as in the
  tail. Compaction used the extractive summarizer (no LLM).
"""
    out = ROOT / "docs" / "benchmarks" / "context.md"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(md)


if __name__ == "__main__":
    main()
