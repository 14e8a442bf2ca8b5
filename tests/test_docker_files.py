"""docker/Dockerfile and docker/compose.yaml, checked without a Docker engine: the compose file parses and uses only
variables graphmem reads; the image's entry command (`graphmem serve` with the image's environment) starts the app
in this venv against the test Neo4j, and the image's HEALTHCHECK command passes against it."""
from __future__ import annotations

import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import yaml
from pydantic import AliasChoices

from graphmem.settings import Settings
from tests.neo4j_fixture import free_port
from tests.test_cli import _wait_ready

ROOT = Path(__file__).resolve().parents[1]
DOCKERFILE = (ROOT / "docker" / "Dockerfile").read_text()
BIN = Path(sys.executable).parent


def settings_env_names() -> set[str]:
    """Every environment variable `Settings` reads."""
    names = set()
    for name, f in Settings.model_fields.items():
        if isinstance(f.validation_alias, AliasChoices):
            names |= {c for c in f.validation_alias.choices if isinstance(c, str)}
        else:
            names.add(f"GRAPHMEM_{name.upper()}")
    return names


def _dockerfile_instructions(kind: str) -> list[str]:
    text = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1].strip() for line in text.splitlines() if line.upper().startswith(kind + " ")]


def _dockerfile_env() -> dict[str, str]:
    env = {}
    for inst in _dockerfile_instructions("ENV"):
        for part in shlex.split(inst):
            k, _, v = part.partition("=")
            env[k] = v
    return env


def test_compose_parses_and_references_only_settings_env_vars():
    compose = yaml.safe_load((ROOT / "docker" / "compose.yaml").read_text())
    services = compose["services"]
    assert set(services) == {"neo4j", "api", "worker"}
    neo4j = services["neo4j"]
    assert neo4j["image"] == "neo4j:5.26-community"
    assert "cypher-shell" in " ".join(neo4j["healthcheck"]["test"]) and "RETURN 1" in " ".join(neo4j["healthcheck"]["test"])
    assert any(v.endswith(":/data") for v in neo4j["volumes"]) and "NEO4J_AUTH" in neo4j["environment"]
    known = settings_env_names()
    for name in ("api", "worker"):
        svc = services[name]
        assert svc["depends_on"]["neo4j"]["condition"] == "service_healthy"
        unknown = set(svc["environment"]) - known
        assert unknown == set(), f"{name} sets variables graphmem does not read: {unknown}"
        assert svc["environment"]["NEO4J_URI"] == "bolt://neo4j:7687"
    assert services["api"]["command"] == ["serve"] and services["worker"]["command"] == ["worker"]
    assert services["api"]["build"]["dockerfile"] == "docker/Dockerfile"
    # the image's HEALTHCHECK asks the API; a worker serves no HTTP, so it would always be unhealthy
    assert services["worker"]["healthcheck"] == {"disable": True} and "healthcheck" not in services["api"]
    # every embedder can be configured through compose (GRAPHMEM_EMBEDDER=openai needs its endpoint's settings)
    assert {"GRAPHMEM_EMBEDDING_BASE_URL", "GRAPHMEM_EMBEDDING_MODEL", "GRAPHMEM_EMBEDDING_API_KEY",
            "GRAPHMEM_EMBEDDING_DIMENSION", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_LLM_API_KEY"} <= set(
        services["worker"]["environment"])


def test_dockerignore_keeps_the_venv_out_and_what_the_image_copies_in():
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    assert ".venv" in ignored and ".git" in ignored
    for inst in _dockerfile_instructions("COPY"):
        if inst.startswith("--from"):
            continue
        for src in inst.split()[:-1]:
            assert not any(src == pattern or src.startswith(pattern + "/") for pattern in ignored), src


def test_dockerfile_is_multistage_slim_and_non_root():
    froms = _dockerfile_instructions("FROM")
    assert len(froms) >= 2 and all(f.startswith("python:3.11-slim") for f in froms)
    users = _dockerfile_instructions("USER")
    assert users and users[-1] not in ("root", "0")
    assert json.loads(_dockerfile_instructions("ENTRYPOINT")[0]) == ["graphmem"]
    assert json.loads(_dockerfile_instructions("CMD")[-1]) == ["serve"]
    unknown = {k for k in _dockerfile_env() if k.startswith(("GRAPHMEM_", "NEO4J_"))} - settings_env_names()
    assert unknown == set()
    # everything the image installs from is in the build context it copies
    for src in ("pyproject.toml", "graphmem", "api", "cypher"):
        assert any(inst.startswith(src) for inst in _dockerfile_instructions("COPY")), src


def test_image_entry_command_starts_the_app(neo4j_server):
    """ENTRYPOINT + CMD with the image's ENV, run from this venv; then the image's HEALTHCHECK command."""
    port = free_port()
    admin_secret = "gm_boot_" + secrets.token_urlsafe(24)
    image_env = {k: v for k, v in _dockerfile_env().items() if k != "TIKTOKEN_CACHE_DIR"}   # a path in the image only
    env = {**os.environ, **image_env, "GRAPHMEM_API_HOST": "127.0.0.1", "GRAPHMEM_API_PORT": str(port),
           "GRAPHMEM_BOOTSTRAP_ADMIN_KEY": admin_secret, "PATH": f"{BIN}:{os.environ['PATH']}"}
    env["GRAPHMEM_HOME"] = str(Path(env.get("TMPDIR", "/tmp")) / f"graphmem-home-{port}")
    cmd = json.loads(_dockerfile_instructions("ENTRYPOINT")[0]) + json.loads(_dockerfile_instructions("CMD")[-1])
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url = f"http://127.0.0.1:{port}"
        assert _wait_ready(url, proc).json()["neo4j"] == "ok"
        r = httpx.get(f"{url}/v1/admin/tenants", headers={"Authorization": f"Bearer {admin_secret}"})
        assert r.status_code == 200 and any(t["tenant_id"] == "admin" for t in r.json()["items"])
        health = re.search(r"HEALTHCHECK .*?CMD (\[.*\])", DOCKERFILE.replace("\\\n", " ")).group(1)
        check = subprocess.run([sys.executable if a == "python" else a for a in json.loads(health)], env=env,
                               timeout=30)
        assert check.returncode == 0
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)
