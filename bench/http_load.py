"""HTTP benchmark: end-to-end latency of the agent loop's two calls through the real API process on loopback.

A `graphmem serve` process (uvicorn, one worker process, no extraction worker) serves the API; this script is the
second process: an asyncio httpx load generator with C concurrent clients, each its own session, each looping
"load the window" (POST /v1/sessions/{id}/context) then "append the turn" (POST /v1/sessions/{id}/turns, a user
and an assistant message). Per call: latency from request sent to reply read. Per level: requests per second and
the API process's RSS (VmRSS at the end, VmHWM = peak) from /proc.

Needs NEO4J_URI (the server talks to it). Writes bench/results/http.json and docs/benchmarks/http.md.

usage: NEO4J_URI=bolt://... python bench/http_load.py [--levels 8,64] [--seconds 20] [--warmup 3] [--budget 2000]
"""
from __future__ import annotations

import sys
from pathlib import Path

_HERE = Path(__file__).resolve().parent

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import signal  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from datetime import datetime, timezone  # noqa: E402

import httpx  # noqa: E402

ROOT = _HERE.parent
sys.path.insert(0, str(ROOT))

from bench.common import free_port, pct  # noqa: E402
from bench.locomo_common import machine  # noqa: E402

from graphmem.keys import KeyStore  # noqa: E402
from graphmem.settings import Settings  # noqa: E402
from graphmem.store import Database  # noqa: E402

POLICY = "You are Acme's support assistant. Cite facts by id. Never promise refunds above 500 EUR."
QUESTIONS = ["Where is my refund for order A-10293?", "Can I change the delivery address?",
             "The invoice shows the wrong VAT number.", "Please cancel the second subscription.",
             "Is the SSO integration available on the Team plan?", "My export has been pending for two days."]


def rss_kib(pid: int) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak) of a process, in KiB, from /proc/<pid>/status."""
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(("VmRSS:", "VmHWM:")):
            k, v = line.split(":", 1)
            out[k] = int(v.split()[0])
    return out


def start_server(port: int) -> subprocess.Popen:
    """`graphmem serve` as its own process. Its logs go to a file: a pipe nobody reads fills up and blocks the
    server's event loop on its next log line (which is what an earlier version of this script measured)."""
    env = {**os.environ, "GRAPHMEM_API_PORT": str(port), "GRAPHMEM_API_HOST": "127.0.0.1"}
    log = tempfile.NamedTemporaryFile("w+", prefix="graphmem-serve-", suffix=".log", delete=False)
    proc = subprocess.Popen([str(Path(sys.executable).parent / "graphmem"), "serve", "--log-level", "warning"],
                            env=env, stdout=subprocess.DEVNULL, stderr=log, text=True)
    proc.log_path = log.name
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"graphmem serve exited: {Path(proc.log_path).read_text()[-3000:]}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise SystemExit("graphmem serve did not become ready")


async def client_loop(http: httpx.AsyncClient, session: str, stop_at: float, record: bool, lat: dict, budget: int,
                      errors: list) -> None:
    turn = 0
    while time.perf_counter() < stop_at:
        q = QUESTIONS[turn % len(QUESTIONS)]
        now = datetime.now(timezone.utc).isoformat()
        t0 = t1 = t2 = time.perf_counter()
        try:
            r = await http.post(f"/v1/sessions/{session}/context", json={
                "query": q, "budget_tokens": budget, "system_policy": POLICY, "goal": "resolve the ticket",
                "user_id": f"u-{session}"})
            t1 = time.perf_counter()
            if r.status_code != 200:
                errors.append(f"context {r.status_code}: {r.text[:200]}")
            r = await http.post(f"/v1/sessions/{session}/turns", json={
                "idempotency_key": f"{session}-{turn}", "user_id": f"u-{session}", "episodes": [
                    {"role": "user", "content": q, "occurred_at": now},
                    {"role": "assistant", "content": f"Let me check that for you (turn {turn}).", "occurred_at": now}]})
            t2 = time.perf_counter()
            if r.status_code not in (200, 201):
                errors.append(f"turns {r.status_code}: {r.text[:200]}")
        except httpx.HTTPError as exc:  # a timeout under overload counts as an error, not a crash
            errors.append(f"{type(exc).__name__}: {exc}")
            turn += 1
            continue
        if record:
            lat["context"].append(t1 - t0)
            lat["turn"].append(t2 - t1)
        turn += 1


async def run_level(url: str, key: str, clients: int, seconds: float, warmup: float, budget: int) -> dict:
    lat: dict[str, list[float]] = {"context": [], "turn": []}
    errors: list[str] = []
    limits = httpx.Limits(max_connections=clients, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=120,
                                 limits=limits) as http:
        run = uuid.uuid4().hex[:6]
        if warmup > 0:
            stop = time.perf_counter() + warmup
            await asyncio.gather(*[client_loop(http, f"warm-{run}-{i}", stop, False, lat, budget, errors)
                                   for i in range(clients)])
        started = time.perf_counter()
        stop = started + seconds
        await asyncio.gather(*[client_loop(http, f"s-{run}-{i}", stop, True, lat, budget, errors)
                               for i in range(clients)])
        elapsed = time.perf_counter() - started
    n = len(lat["context"]) + len(lat["turn"])

    def ms(xs: list[float], p: float) -> float:
        return round(pct(xs, p) * 1000, 1) if xs else float("nan")
    return {"clients": clients, "seconds": round(elapsed, 1), "requests": n, "errors": len(errors),
            "first_errors": errors[:3],
            "requests_per_s": {"value": round(n / elapsed, 1), "unit": "requests/s"},
            "turns_per_s": {"value": round(len(lat["turn"]) / elapsed, 1), "unit": "turns/s"},
            "context_p50": {"value": ms(lat["context"], 50), "unit": "ms"},
            "context_p95": {"value": ms(lat["context"], 95), "unit": "ms"},
            "turn_p50": {"value": ms(lat["turn"], 50), "unit": "ms"},
            "turn_p95": {"value": ms(lat["turn"], 95), "unit": "ms"}}


def write_markdown(result: dict, path: Path) -> None:
    m = result["machine"]
    rows = "\n".join(
        f"| {lv['clients']} | {lv['context_p50']['value']} | {lv['context_p95']['value']} | {lv['turn_p50']['value']} "
        f"| {lv['turn_p95']['value']} | {lv['requests_per_s']['value']} | {lv['turns_per_s']['value']} "
        f"| {lv['rss_mib']['value']} | {lv['rss_peak_mib']['value']} | {lv['errors']} |"
        for lv in result["levels"])
    p = result["parameters"]
    failed = "".join(
        f"- At {lv['clients']} clients {lv['errors']} calls failed (first: {'; '.join(lv['first_errors'])}); "
        f"{lv['requests']} completed. A level where nothing completed within the client timeout is a stall of the "
        "API process under that concurrency, not a latency figure.\n" for lv in result["levels"] if lv["errors"])
    path.write_text(f"""## HTTP: the turn calls end to end

Commit `{result['commit'][:12]}`, {result['date_utc']}, {m['cpus']} CPUs ({m['cpu_model']}), {m['ram_gib']} GiB RAM.

One `graphmem serve` process (uvicorn, 1 process, no extraction worker) on loopback; the load generator is a second
process (asyncio + httpx) with C concurrent clients, each its own session, each looping *load the window*
(`POST /v1/sessions/{{id}}/context`, budget {p['budget_tokens']} tokens, a query so retrieval runs) then *append the
turn* (`POST /v1/sessions/{{id}}/turns`, a user and an assistant message). {p['seconds']} s measured per level after
{p['warmup_s']} s of warm-up. Latency is request sent to reply read, as the agent sees it. RSS is the API process's.

| clients | context p50 (ms) | context p95 (ms) | turn p50 (ms) | turn p95 (ms) | requests/s | turns/s | RSS end (MiB) | RSS peak (MiB) | errors |
|---|---|---|---|---|---|---|---|---|---|
{rows}

Command: `NEO4J_URI=bolt://127.0.0.1:17687 python bench/http_load.py --levels {','.join(str(c) for c in p['levels'])} --seconds {p['seconds']}`

Notes:
- {m['cpus']} cores shared by the API process, the load generator and Neo4j (1-minute load average in the JSON's
  machine record): at 64 clients the figures measure queueing on those cores as much as graphmem; requests/s is the ceiling
  of this box, not of the design (API replicas scale out; see DESIGN.md "Scale").
- Sessions grow by two episodes per turn; compaction runs in the API process after a turn once a session's raw
  tail passes `GRAPHMEM_COMPACTION_THRESHOLD_TOKENS`, so longer runs include compaction work.
- The appended episodes are extraction jobs left pending (no worker ran): the figures are the HTTP path only.
- Neo4j was {p['neo4j']}.
{failed}""")


def main() -> None:
    if sys.argv[1:] == ["--markdown-only"]:  # re-render docs/benchmarks/http.md from bench/results/http.json
        write_markdown(json.loads((ROOT / "bench" / "results" / "http.json").read_text()),
                       ROOT / "docs" / "benchmarks" / "http.md")
        return
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default="8,64", help="concurrent clients per level, comma-separated")
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds per level")
    ap.add_argument("--warmup", type=float, default=3.0, help="warm-up seconds per level (not measured)")
    ap.add_argument("--budget", type=int, default=2000, help="window budget in tokens")
    args = ap.parse_args()
    if not os.environ.get("NEO4J_URI"):
        raise SystemExit("set NEO4J_URI to a running Neo4j (e.g. `graphmem neo4j start` prints one)")
    levels = [int(x) for x in args.levels.split(",")]
    settings = Settings()
    db = Database.from_settings(settings)
    tenant = f"bench-http-{uuid.uuid4().hex[:8]}"
    key = KeyStore(db).create(tenant, "agent", "bench-http")[1]
    db.close()
    port = free_port()
    server = start_server(port)
    url = f"http://127.0.0.1:{port}"
    out_levels = []
    try:
        for clients in levels:
            lv = asyncio.run(run_level(url, key, clients, args.seconds, args.warmup, args.budget))
            mem = rss_kib(server.pid)
            lv["rss_mib"] = {"value": round(mem["VmRSS"] / 1024, 1), "unit": "MiB"}
            lv["rss_peak_mib"] = {"value": round(mem["VmHWM"] / 1024, 1), "unit": "MiB"}
            print(json.dumps(lv), flush=True)
            out_levels.append(lv)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()
    result = {**machine(), "benchmark": "http",
              "parameters": {"levels": levels, "seconds": args.seconds, "warmup_s": args.warmup,
                             "budget_tokens": args.budget, "tenant": tenant, "server": "graphmem serve (1 process)",
                             "neo4j": "the shared dev server named by NEO4J_URI, on the same machine"},
              "levels": out_levels}
    (ROOT / "bench" / "results").mkdir(parents=True, exist_ok=True)
    (ROOT / "bench" / "results" / "http.json").write_text(json.dumps(result, indent=2) + "\n")
    (ROOT / "docs" / "benchmarks").mkdir(parents=True, exist_ok=True)
    write_markdown(result, ROOT / "docs" / "benchmarks" / "http.md")
    print("wrote bench/results/http.json and docs/benchmarks/http.md")


if __name__ == "__main__":
    main()
