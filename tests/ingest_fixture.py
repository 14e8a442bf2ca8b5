"""Fixtures for ingestion tests: the scripted OpenAI-compatible server, `Services` with chosen settings, and
helpers to run worker processes and scan a tenant's whole graph."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from graphmem.services import Services
from graphmem.settings import Settings
from graphmem.store import Database
from tests.fake_openai import FakeOpenAIServer

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fake_llm() -> Iterator[FakeOpenAIServer]:
    """A fresh scripted OpenAI-compatible server on loopback."""
    with FakeOpenAIServer() as srv:
        yield srv


@pytest.fixture
def make_services(db: Database, settings: Settings) -> Callable[..., Services]:
    """make_services(**settings_overrides) -> a `Services` on the shared database with those settings."""
    def make(**overrides) -> Services:
        return Services(db, settings.model_copy(update={"job_backoff_s": 0.01, **overrides}))
    return make


LLM_TIMEOUT_S = 30.0
"""The client timeout of tests whose fake LLM answers at once. Generous on purpose: a reply the client gave up on is
retried, and the retry takes the next scripted reply, so a short timeout on a loaded machine changed what a test saw
(the timeout path has its own test with its own short timeout)."""


@pytest.fixture
def llm_services(make_services, fake_llm) -> Services:
    """Services whose LLM is the fake server (`LLM_TIMEOUT_S` timeout, 2 retries)."""
    return make_services(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                         llm_max_retries=2)


def worker_process(tenant: str, *extra: str, env: dict[str, str] | None = None) -> subprocess.Popen:
    """Start `python -m graphmem.ingest.cli worker --tenant <tenant> ...` as a separate process."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.Popen([sys.executable, "-m", "graphmem.ingest.cli", "worker", "--tenant", tenant, *extra],
                            cwd=ROOT, env=full_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def worker_summary(proc: subprocess.Popen, timeout: float = 120) -> dict:
    """Wait for a `--until-idle` worker process and parse its JSON summary."""
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1])


def tenant_strings(db: Database, tenant_id: str) -> list[str]:
    """Every property value (as text) of every node of the tenant and of every relationship touching them."""
    with db.driver.session(database=db.database) as s:
        nodes = s.run("MATCH (n) WHERE n.tenant_id = $t RETURN properties(n) AS p, labels(n) AS l", t=tenant_id).data()
        rels = s.run("MATCH (n)-[r]-() WHERE n.tenant_id = $t RETURN DISTINCT properties(r) AS p", t=tenant_id).data()
    out = []
    for row in nodes + rels:
        for k, v in row["p"].items():
            out.append(f"{k}={v}")
    return out
