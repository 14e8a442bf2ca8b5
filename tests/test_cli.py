"""The `graphmem` command line: help, keys, search, recall, worker/ingest registration and `serve` as a real
process (JSON logs with request ids, metrics, graceful shutdown). Runs against the test Neo4j (NEO4J_URI)."""
from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from graphmem.cli import main
from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.neo4j_fixture import free_port

GRAPHMEM = str(Path(sys.executable).parent / "graphmem")


@pytest.fixture
def cli(neo4j_server):
    """Invoke the CLI in-process against the test Neo4j; returns (exit code, stdout, stderr)."""
    runner = CliRunner()

    def run(*args: str, columns: int = 80):
        r = runner.invoke(main, list(args), catch_exceptions=False, env={"COLUMNS": str(columns)})
        return r.exit_code, r.stdout, r.stderr
    return run


def test_help_on_every_command(cli):
    code, out, _ = cli("--help")
    assert code == 0
    for name in ("serve", "worker", "ingest", "neo4j", "search", "recall", "context", "keys", "demo"):
        assert name in out, name
    code, out, _ = cli("--version")   # found by a helper walking the README: there was none
    assert code == 0 and out.strip() == f"graphmem {importlib.metadata.version('graphmem')}", out
    for args in (["serve"], ["worker"], ["ingest"], ["search"], ["recall"], ["context"], ["keys"], ["keys", "create"],
                 ["keys", "list"], ["keys", "revoke"], ["keys", "rotate"], ["neo4j", "start"], ["demo"]):
        code, out, _ = cli(*args, "--help")
        assert code == 0 and "Usage:" in out, args


def test_keys_list_pages_as_the_api_does(cli, tenant, services):
    """--offset and --limit take what GET /v1/admin/tenants/{tenant}/keys takes (offset >= 0, limit 1..500), as a
    usage error naming the option (helper-found: --offset -1 ended in Neo4j's traceback, --limit 0 printed [] as if
    the tenant had no key, and --limit 100000 was taken)."""
    services.keys.create(tenant, "agent", "one")
    for args, option in ((["--offset", "-1"], "--offset"), (["--limit", "0"], "--limit"),
                         (["--limit", "501"], "--limit")):
        code, _, err = cli("keys", "list", "--tenant", tenant, *args)
        assert code == 2 and option in err, (args, code, err)
    code, out, _ = cli("keys", "list", "--tenant", tenant, "--limit", "500")
    assert code == 0 and len(json.loads(out)) == 1, out


def test_keys_lifecycle(cli, tenant, services):
    code, out, _ = cli("keys", "create", "--tenant", f"{tenant}-m", "--role", "agent", "--name", "[bold]ADMIN[/] [/]")
    assert code == 0
    for columns in (80, 40):   # a name shows as typed, never read as rich markup (helper-found: "[/]" crashed)
        code, out, _ = cli("keys", "list", "--tenant", f"{tenant}-m", "--format", "table", columns=columns)
        assert code == 0 and "[bold]ADMIN[/] [/]" in out, out
    code, out, _ = cli("keys", "create", "--tenant", tenant, "--role", "analyst", "--name", "bi")
    assert code == 0
    created = json.loads(out)
    assert created["key"]["tenant_id"] == tenant and created["secret"].startswith("gm_")
    assert services.keys.authenticate(created["secret"]).role == "analyst"
    code, out, _ = cli("keys", "list", "--tenant", tenant)
    listed = json.loads(out)
    assert [k["id"] for k in listed] == [created["key"]["id"]] and created["secret"] not in out
    code, out, _ = cli("keys", "list", "--tenant", tenant, "--format", "table")   # 80 columns: the id stays whole
    assert code == 0 and created["key"]["prefix"] in out and created["key"]["id"] in out, out
    # the time stays whole too, headers unsplit (helper-found: the ISO time wrapped over six lines), and the role
    # and name still show (helper-found: two whole times beside the id squeezed them to nothing)
    assert created["key"]["created_at"][:10] in out and "created" in out and max(map(len, out.splitlines())) <= 80
    assert " analyst " in out and " bi " in out and " active " in out, out
    code, out, _ = cli("keys", "rotate", "--tenant", tenant, created["key"]["id"])
    rotated = json.loads(out)
    assert services.keys.authenticate(created["secret"]) is None
    assert services.keys.authenticate(rotated["secret"]).role == "analyst"
    code, out, _ = cli("keys", "revoke", "--tenant", tenant, rotated["key"]["id"])
    assert code == 0 and json.loads(out)["revoked_at"]
    revoked_at = datetime.fromisoformat(json.loads(out)["revoked_at"]).astimezone(timezone.utc)
    code, out, _ = cli("keys", "list", "--tenant", tenant, "--format", "table")   # the revocation time, to the second
    assert revoked_at.strftime("%Y-%m-%d %H:%M:%SZ") in out and max(map(len, out.splitlines())) <= 80, out
    # narrower than a table fits (helper-found: at 60 columns the role and name were squeezed out again, at 40
    # "active" read "ac"): one block a key, the id whole on a line of its own
    code, out, _ = cli("keys", "list", "--tenant", tenant, "--format", "table", columns=40)
    assert code == 0 and max(map(len, out.splitlines())) <= 40, out
    assert f"\n{rotated['key']['id']}\n" in out and " analyst " in out and " bi " in out, out
    assert revoked_at.strftime("%Y-%m-%d %H:%M:%SZ") in out, out
    code, out, err = cli("keys", "list", "--tenant", tenant, "--format", "table", "--limit", "1")
    assert code == 0 and "there may be more: --offset 1" in err, err   # a full page says so
    assert services.keys.authenticate(rotated["secret"]) is None


def test_a_missing_tenant_is_an_error(cli):
    for args in (["keys", "list"], ["keys", "create", "--role", "agent"], ["search", "x"], ["recall", "Dana"]):
        code, _, err = cli(*args)
        assert code == 2 and "--tenant" in err, args
    # a tenant id no key can have is a usage error everywhere (`graphmem ingest --tenant ' t1'` wrote into it)
    for args in (["keys", "list", "--tenant", "  "], ["ingest", "--tenant", " t1", __file__],
                 ["ingest", "--tenant", "a/b", __file__], ["search", "x", "--tenant", "t1 "],
                 ["worker", "--tenant", "ok", "--tenant", " bad"]):
        code, _, err = cli(*args)
        assert code == 2 and "--tenant" in err and ("whitespace" in err or "non-empty" in err), (args, err)


def _story(graph, tenant):
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="Dana moved to Globex; Sam knows Dana.",
                                                   occurred_at="2021-06-14T00:00:00Z"))
    dana = EntityRef(kind="Person", name="Dana Reyes")
    graph.assert_facts(tenant, [
        FactIn(subject=dana, predicate="WORKS_AT", object=EntityRef(kind="Organization", name="Globex"),
               episode_id=ep.id),
        FactIn(subject=EntityRef(kind="Person", name="Sam Carter"), predicate="KNOWS", object=dana,
               episode_id=ep.id)])


def test_search_and_recall(cli, graph, tenant):
    _story(graph, tenant)
    code, out, err = cli("search", "--tenant", tenant, "Globex", "--target", "fact")
    assert code == 0, err
    hits = json.loads(out)["hits"]
    assert hits and "Globex" in hits[0]["text"] and hits[0]["kind"] == "fact"
    code, out, _ = cli("search", "--tenant", tenant, "Globex", "--format", "table")
    assert code == 0 and "Globex" in out
    code, out, err = cli("recall", "--tenant", tenant, "Sam Carter", "--to", "Globex")
    assert code == 0, err
    paths = json.loads(out)["paths"]
    assert paths and paths[0]["length"] == 2 and paths[0]["target"]["name"] == "Globex"
    code, out, _ = cli("recall", "--tenant", tenant, "Sam Carter", "--format", "table")
    assert code == 0 and "Globex" in out
    code, _, err = cli("recall", "--tenant", tenant, "Nobody Here")
    assert code == 1 and "no entity named 'Nobody Here'" in err
    code, _, err = cli("search", "--tenant", tenant, "x", "--as-of", "2020-01-01")
    assert code == 1 and "timezone" in err


def test_errors_name_the_commands_options_and_defaults_match_the_api(cli, graph, tenant):
    """Found by a helper: the CLI quoted the API's field names (`entity.kind` for --kind, `max_hops`), let an
    invisible query through and cut paths at 20 where the API answers 50."""
    _story(graph, tenant)
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--kind", "Organization")
    assert code == 1 and err.startswith("error: ENTITY: no Organization named 'Dana Reyes'") and "`--kind`" in err
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--kind", "person")
    assert code == 1 and err.startswith("error: --kind: ") and "PascalCase" in err
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--max-hops", "9")
    assert code == 1 and err.startswith("error: --max-hops must be between 1 and 3"), err
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--predicate", "bogus")
    assert code == 1 and err.startswith("error: --predicate: unknown predicate 'BOGUS'"), err
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--to", "Nobody Here")
    assert code == 1 and err.startswith("error: --to: no entity named 'Nobody Here'"), err
    # between two entities too (a second helper: `predicate[0]`, `to_id`, `give to.kind`)
    for args, said in ((["--to", "Globex", "--predicate", "works_at", "--predicate", "bogus"],
                        "error: --predicate: unknown predicate 'BOGUS'"),
                       (["--to", "Dana Reyes"], "error: --to: the same entity as ENTITY"),
                       (["--to", "Globex", "--to-kind", "Person"], "error: --to: no Person named 'Globex'"),
                       (["--to", "Globex", "--to-kind", "person"], "error: --to-kind: kind must be a PascalCase")):
        code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", *args)
        assert code == 1 and err.startswith(said), (args, err)
        assert "to.kind" not in err and "to_id" not in err and "`kind`" not in err, err
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="Acme, the person and the company",
                                                   occurred_at="2021-07-01T00:00:00Z"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Acme"), predicate="WORKS_AT",
                                       object=EntityRef(kind="Organization", name="Acme"), episode_id=ep.id)])
    code, _, err = cli("recall", "--tenant", tenant, "Acme")
    assert code == 1 and err.startswith("error: ENTITY: ") and "--kind" in err and "entity." not in err, err
    code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", "--to", "Acme")
    assert code == 1 and err.startswith("error: --to: ") and "--to-kind" in err and "to." not in err, err
    for args, said in ((["--to-kind", "Person"], "error: --to-kind: only with --to"),
                       (["--to", "Globex", "--limit", "5"], "error: --limit: only around one entity")):
        code, _, err = cli("recall", "--tenant", tenant, "Dana Reyes", *args)    # an option that would do nothing
        assert code == 1 and err.startswith(said), (args, err)
    code, out, err = cli("recall", "--tenant", tenant, "Acme", "--kind", "Person", "--to", "Acme",
                         "--to-kind", "Organization")
    assert code == 0 and json.loads(out)["paths"][0]["length"] == 1, err
    for blank in ("\u200b", " \ufeff "):
        code, _, err = cli("search", "--tenant", tenant, blank)
        assert code == 1 and err.startswith("error: QUERY: must not be blank"), err
    code, _, err = cli("search", "--tenant", tenant, "x", "-k", "0")
    assert code == 1 and err.startswith("error: -k: "), err
    code, _, err = cli("search", "--tenant", tenant, "x", "--known-at", "yesterday")
    assert code == 1 and err.startswith("error: --known-at: "), err
    code, _, err = cli("context", "--tenant", tenant, "--session", "s1", "--budget", "100", "--system-policy", " ")
    assert code == 1 and err.startswith("error: --system-policy: must not be blank"), err

    hub = EntityRef(kind="Organization", name="Hub Corp")
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="Thirty people joined Hub Corp.",
                                                   occurred_at="2021-07-01T00:00:00Z"))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=f"Member {i}"), predicate="WORKS_AT",
                                       object=hub, episode_id=ep.id) for i in range(30)])
    code, out, err = cli("recall", "--tenant", tenant, "Hub Corp", "--max-hops", "1")
    assert code == 0, err
    assert len(json.loads(out)["paths"]) == 30     # the API's default limit is 50; the CLI's was 20
    code, out, err = cli("recall", "--tenant", tenant, "Hub Corp", "--max-hops", "1", "--limit", "7")
    assert code == 0 and len(json.loads(out)["paths"]) == 7, err


def _serve(port: int, *extra: str, **env_extra: str) -> subprocess.Popen:
    env = {**os.environ, "GRAPHMEM_API_PORT": str(port), **env_extra}
    return subprocess.Popen([GRAPHMEM, "serve", *extra], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def _wait_ready(url: str, proc: subprocess.Popen, timeout: float = 60) -> httpx.Response:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"graphmem serve exited: {proc.stderr.read()}")
        try:
            r = httpx.get(f"{url}/readyz", timeout=2)
            if r.status_code == 200:
                return r
        except httpx.TransportError:
            pass
        time.sleep(0.2)
    raise AssertionError("graphmem serve did not become ready")


def test_serve_logs_json_with_request_ids_and_shuts_down_cleanly(neo4j_server, services, tenant):
    """... and `--with-worker` runs the retention sweeper too, as `graphmem worker` does (it ran only extraction)."""
    from graphmem.errors import NotFound
    expired, _ = services.graph.append_episode(tenant, EpisodeIn(content="kept past its retention",
                                                                 occurred_at="2020-01-01T00:00:00Z"))
    with services.db.driver.session() as s:
        s.run("MATCH (e:Episode {tenant_id: $t, id: $id}) SET e.retain_until = datetime('2021-01-01T00:00:00Z')",
              t=tenant, id=expired.id).consume()
    port = free_port()
    proc = _serve(port, "--with-worker", GRAPHMEM_SWEEP_INTERVAL_S="1")
    try:
        url = f"http://127.0.0.1:{port}"
        ready = _wait_ready(url, proc).json()
        assert ready.pop("warm_up") in ("running", "done"), ready   # done once planned (tests/test_warm_up.py)
        assert ready == {"status": "ready", "neo4j": "ok",
                         "vector_search": "off: no embedder configured (GRAPHMEM_EMBEDDER=none)"}
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                services.graph.get_episode(tenant, expired.id)
            except NotFound:
                break
            time.sleep(0.5)
        else:
            raise AssertionError("serve --with-worker did not sweep an episode past its retention")
        key = services.keys.create(tenant, "agent", "cli-test")[1]
        r = httpx.get(f"{url}/v1/facts/{'0' * 32}", headers={"Authorization": f"Bearer {key}",
                                                             "X-Request-ID": "req-cli-1"})
        assert r.status_code == 404 and r.headers["x-request-id"] == "req-cli-1"
        metrics = httpx.get(f"{url}/metrics").text
        assert 'graphmem_http_request_duration_seconds_count{method="GET",route="/v1/facts/{fact_id}",status="404"}' \
            in metrics
        assert 'graphmem_jobs{state="pending"}' in metrics and 'graphmem_jobs{state="dead"}' in metrics
        assert "graphmem_embedding_model_mismatch 0.0" in metrics
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, -signal.SIGTERM), err  # uvicorn re-raises the signal after a clean shutdown
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    access = [x for x in lines if x["logger"] == "graphmem.access" and x.get("request_id") == "req-cli-1"]
    assert access and access[0]["status"] == 404 and access[0]["route"] == "/v1/facts/{fact_id}"
    assert any("shutdown complete" in x["message"].lower() for x in lines), err[-3000:]
    assert any(x["message"].startswith("warm-up done in") for x in lines)   # the start's wait is said, not silent


def test_serve_reads_a_dotenv_file(tmp_path, neo4j_server):
    port = free_port()
    (tmp_path / ".env").write_text(f"GRAPHMEM_API_PORT={port}\nNEO4J_URI={os.environ['NEO4J_URI']}\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NEO4J_URI", "GRAPHMEM_API_PORT")}
    proc = subprocess.Popen([GRAPHMEM, "serve"], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_ready(f"http://127.0.0.1:{port}", proc)
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, -signal.SIGINT) and "Application shutdown complete" in err


def test_context_window(cli, services, tenant):
    from datetime import datetime, timezone

    from graphmem.context.models import TurnIn
    now = datetime.now(timezone.utc)
    services.context.append_turn(tenant, "s1", TurnIn(idempotency_key="t1", user_id="u1", episodes=[
        {"role": "user", "content": "I want a refund for order A-10293", "occurred_at": now}]))
    code, out, err = cli("context", "--tenant", tenant, "--session", "s1", "--budget", "2000",
                         "--system-policy", "You are the support agent of Acme.")
    assert code == 0, err
    window = json.loads(out)
    assert window["total_tokens"] <= 2000 and "A-10293" in window["text"]
    assert window["text"].index("support agent of Acme") < window["text"].index("A-10293")
    code, out, _ = cli("context", "--tenant", tenant, "--session", "s1", "--budget", "3",
                       "--system-policy", "You are the support agent of Acme, and this does not fit.")
    assert code == 1
    code, _, err = cli("context", "--session", "s1", "--budget", "100", "--system-policy", "p")
    assert code == 2 and "--tenant" in err


def test_serve_and_worker_refuse_to_start_without_the_configured_local_model(neo4j_server, tmp_path):
    """A configured local model that was never fetched stops the start with its message, instead of a ready
    server whose routes answer 503 (or a worker that fails every job)."""
    env = {"GRAPHMEM_EMBEDDER": "local", "GRAPHMEM_MODEL_DIR": str(tmp_path)}
    proc = _serve(free_port(), **env)
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1 and "graphmem models fetch" in err and "Traceback" not in err
    run = subprocess.run([GRAPHMEM, "worker", "--until-idle"], env={**os.environ, **env}, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert run.stderr.startswith("error: local model e5-small-v2 is not installed")
    assert "graphmem models fetch" in run.stderr


def test_serve_stops_with_one_line_when_neo4j_cannot_be_reached(neo4j_server):
    """Found by helpers: `graphmem serve` against a stopped Neo4j hung for minutes in the driver's retries (and
    then failed with a traceback), and `graphmem worker` printed a traceback. Now both stop with one line once the
    store's retries for a lost connection are spent."""
    nothing_there = free_port()
    proc = _serve(free_port(), NEO4J_URI=f"bolt://127.0.0.1:{nothing_there}", GRAPHMEM_NEO4J_UNAVAILABLE_RETRY_S="1")
    try:
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 1 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith(f"error: Neo4j at bolt://127.0.0.1:{nothing_there} cannot be reached") and "refused" in err
    run = subprocess.run([GRAPHMEM, "worker", "--until-idle"], capture_output=True, text=True, timeout=120, env={
        **os.environ, "NEO4J_URI": f"bolt://127.0.0.1:{nothing_there}", "GRAPHMEM_NEO4J_UNAVAILABLE_RETRY_S": "1"})
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr          # the worker: the same line
    assert run.stderr.startswith("error: Neo4j could not run the query now") and "refused" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


@pytest.mark.parametrize("args, variable, value, named", [
    (["models", "fetch"], "GRAPHMEM_LOCAL_MODEL", "bge-large",
     ["e5-small-v2", "bge-small-en-v1.5", "all-MiniLM-L6-v2"]),
    (["worker", "--until-idle"], "GRAPHMEM_EMBEDDING_DIMENSION", "abc", ["valid integer"]),
    (["serve"], "GRAPHMEM_API_PORT", "eighty", ["valid integer"]),
])
def test_a_bad_setting_is_named_without_a_traceback(tmp_path, args, variable, value, named):
    """A mistyped variable stops any command with one line naming the variable, its value and what is allowed."""
    run = subprocess.run([GRAPHMEM, *args], env={**os.environ, variable: value}, cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 1, run.stderr
    assert f"error: invalid settings: {variable}={value!r}" in run.stderr
    assert all(n in run.stderr for n in named) and "Traceback" not in run.stderr
