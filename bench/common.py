"""Helpers every benchmark shares: where and when a result was measured, percentiles, a free port.

Results files carry `provenance()` (commit, UTC date, machine) so that every figure says where it came from.
"""
from __future__ import annotations

import math
import os
import platform
import socket
import subprocess
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


def provenance() -> dict:
    """{"commit", "date_utc", "machine"} for a results file."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    return {"commit": commit, "date_utc": datetime.now(timezone.utc).isoformat(timespec="seconds"), "machine": host()}


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
