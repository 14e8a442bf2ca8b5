"""The locally managed Neo4j server (graphmem.localneo4j) and the session fixture built on it."""
from __future__ import annotations

import http.server
import io
import socket
import tarfile
import threading
import time
from pathlib import Path

import neo4j
import pytest

import graphmem.localneo4j as localneo4j
from graphmem.localneo4j import NEO4J_VERSION, LocalNeo4j, LocalNeo4jError, connection_for
from graphmem.settings import Settings
from tests.neo4j_fixture import free_port


def _settings(tmp_path: Path, **kw) -> Settings:
    """Settings for a throw-away LocalNeo4j that is never actually launched."""
    return Settings(home=tmp_path / "home", cache_dir=tmp_path / "cache", local_neo4j_port=free_port(),
                    NEO4J_URI=None, **kw)


def test_server_answers_return_1(neo4j_server: Settings) -> None:
    uri, auth = connection_for(neo4j_server)
    with neo4j.GraphDatabase.driver(uri, auth=auth) as driver:
        records, _, _ = driver.execute_query("RETURN 1 AS one", database_=neo4j_server.neo4j_database)
    assert records[0]["one"] == 1


def test_status_reports_running(local_neo4j: LocalNeo4j | None) -> None:
    if local_neo4j is None:
        pytest.skip("NEO4J_URI names an external server")
    status = local_neo4j.status()
    assert status["running"] is True
    assert isinstance(status["pid"], int)
    assert status["uri"] == local_neo4j.uri
    assert status["version"] == NEO4J_VERSION
    assert status["home"] == str(local_neo4j.home)


def test_start_twice_is_idempotent(local_neo4j: LocalNeo4j | None) -> None:
    if local_neo4j is None:
        pytest.skip("NEO4J_URI names an external server")
    pid = local_neo4j.status()["pid"]
    began = time.monotonic()
    assert local_neo4j.start() == local_neo4j.uri
    assert LocalNeo4j(local_neo4j.settings).start() == local_neo4j.uri  # a fresh handle finds it too
    assert time.monotonic() - began < 10
    assert local_neo4j.status()["pid"] == pid


def test_start_on_another_port_names_the_running_one(local_neo4j: LocalNeo4j | None) -> None:
    """The same GRAPHMEM_HOME with another (or the default) port: the error says which port to set (helper-found:
    it said only "stop it first", which would have stopped the server every other command was using)."""
    if local_neo4j is None:
        pytest.skip("NEO4J_URI names an external server")
    pid = local_neo4j.status()["pid"]
    other = LocalNeo4j(local_neo4j.settings.model_copy(update={"local_neo4j_port": free_port()}))
    with pytest.raises(LocalNeo4jError, match=f"set GRAPHMEM_LOCAL_NEO4J_PORT={local_neo4j.port} to use it"):
        other.start()
    assert local_neo4j.status()["pid"] == pid


def test_missing_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    with pytest.raises(LocalNeo4jError, match=r"Java not found on PATH") as err:
        LocalNeo4j(_settings(tmp_path)).start()
    assert "install Java 17+" in str(err.value) and "NEO4J_URI" in str(err.value)


def test_old_java_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java_home = tmp_path / "jdk11"
    (java_home / "bin").mkdir(parents=True)
    fake = java_home / "bin" / "java"
    fake.write_text('#!/bin/sh\necho \'openjdk version "11.0.22" 2024-01-16\' >&2\n')
    fake.chmod(0o755)
    monkeypatch.setenv("JAVA_HOME", str(java_home))
    with pytest.raises(LocalNeo4jError, match=r"needs Java 17\+, but .* is Java 11: install Java 17\+"):
        LocalNeo4j(_settings(tmp_path)).start()


def test_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        settings = _settings(tmp_path).model_copy(update={"local_neo4j_port": port})
        with pytest.raises(LocalNeo4jError, match=rf"port {port} is already in use"):
            LocalNeo4j(settings).start()


def test_missing_maven_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no mvn here
    with pytest.raises(LocalNeo4jError, match=r"install maven.*GRAPHMEM_NEO4J_SOURCE=dist.*NEO4J_URI"):
        LocalNeo4j(_settings(tmp_path, neo4j_source="maven")).ensure_distribution()


def test_dist_source_redoes_a_half_download(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """source=dist takes lib/*.jar from the tarball; leftovers of an unfinished fetch are discarded."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name in ("lib/neo4j-kernel.jar", "lib/other.jar", "conf/neo4j.conf"):
            info = tarfile.TarInfo(f"neo4j-community-{NEO4J_VERSION}/{name}")
            info.size = 3
            tar.addfile(info, io.BytesIO(b"jar"))
    body = buf.getvalue()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    monkeypatch.setattr(localneo4j, "DIST_URL", f"http://127.0.0.1:{httpd.server_port}/neo4j.tar.gz")
    server = LocalNeo4j(_settings(tmp_path, neo4j_source="dist"))
    stale = server.dist_dir / "lib"  # an interrupted earlier fetch: files but no marker
    stale.mkdir(parents=True)
    (stale / "truncated.jar").write_bytes(b"")
    try:
        lib = server.ensure_distribution()
    finally:
        httpd.shutdown()
    assert sorted(p.name for p in lib.iterdir()) == ["neo4j-kernel.jar", "other.jar"]
    assert (server.dist_dir / ".complete").read_text().strip() == "dist"
    monkeypatch.setattr(localneo4j, "DIST_URL", "http://127.0.0.1:1/unreachable")
    assert server.ensure_distribution() == lib  # complete: not fetched again


def test_connection_for_prefers_neo4j_uri(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEO4J_URI", "neo4j://db.example:7687")
    monkeypatch.setenv("NEO4J_USER", "alice")
    monkeypatch.setenv("NEO4J_PASSWORD", "s3cret")
    assert connection_for(Settings(_env_file=None)) == ("neo4j://db.example:7687", ("alice", "s3cret"))
    monkeypatch.delenv("NEO4J_PASSWORD")
    assert connection_for(Settings(_env_file=None)) == ("neo4j://db.example:7687", None)
    monkeypatch.delenv("NEO4J_URI")
    monkeypatch.setenv("GRAPHMEM_LOCAL_NEO4J_PORT", "17999")
    assert connection_for(Settings(_env_file=None)) == ("bolt://127.0.0.1:17999", None)
