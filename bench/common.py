"""Helpers every benchmark shares: where and when a result was measured, percentiles, a free port.

Results files carry `provenance()` (commit, UTC date, machine) so that every figure says where it came from.
"""
from __future__ import annotations

import contextlib
import math
import os
import platform
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def host() -> dict:
    """The machine: CPU count and model (/proc/cpuinfo), RAM (GiB), Python, 1-minute load average now."""
    cpu = next((l.split(":", 1)[1].strip() for l in Path("/proc/cpuinfo").read_text().splitlines()
                if l.startswith("model name")), platform.processor())
    mem_kb = int(next(l.split()[1] for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")))
    return {"cpus": os.cpu_count(), "cpu_model": cpu, "ram_gib": round(mem_kb / 2**20, 1),
            "python": platform.python_version(), "load_average_1m": round(os.getloadavg()[0], 2)}


def _head() -> str:
    """The commit checked out in this clone, or "" outside a git work tree."""
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()


LOADED_COMMIT = _head()
"""The commit checked out when this process imported the benchmark: the code it runs. A run is long, and a commit
made in the clone meanwhile does not change the code the process loaded (a LoCoMo run of b2c6e38 once recorded a
later commit, read at its end)."""


def provenance() -> dict:
    """{"commit", "date_utc", "machine"} for a results file: the commit the process loaded (`LOADED_COMMIT`), the
    date and machine now (UTC)."""
    return {"commit": LOADED_COMMIT, "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "machine": host()}


def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear interpolation between closest ranks (numpy's default method)."""
    s = sorted(values)
    if not s:
        return float("nan")
    pos = (len(s) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def neo4j_for_bench(uri: str | None = None, heap: str = "3g", pagecache: str = "2g") -> Iterator[tuple[object, str]]:
    """Settings for a benchmark's Neo4j: `uri` when given, else a private LocalNeo4j (temp dir, free port, `heap`
    and `pagecache`) started here, stopped on exit and its temp dir (~4 GB after a 1M-fact run) removed. Yields
    (settings, description of the server)."""
    from graphmem.localneo4j import LocalNeo4j
    from graphmem.settings import Settings
    if uri:
        yield Settings(NEO4J_URI=uri), uri
        return
    base = Settings(home=Path(tempfile.mkdtemp(prefix="graphmem-bench-")), local_neo4j_port=free_port(),
                    local_neo4j_heap=heap, local_neo4j_pagecache=pagecache, NEO4J_URI=None, NEO4J_PASSWORD=None)
    server = LocalNeo4j(base)
    started = server.start(timeout_s=240)
    try:
        yield base.model_copy(update={"neo4j_uri": started}), \
            f"private LocalNeo4j 5.26 (heap {heap}, page cache {pagecache})"
    finally:
        server.stop()
        shutil.rmtree(base.home, ignore_errors=True)
