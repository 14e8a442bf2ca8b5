"""A locally managed Neo4j 5.26 Community server, for when no `NEO4J_URI` is configured.

The server lives under `Settings.home / "neo4j"` (conf/, data/, logs/, run/) and runs from jars
fetched once into `Settings.cache_dir / "neo4j-5.26.30"`: either resolved from Maven Central with
`mvn` and the `pom.xml` shipped in this package (`GRAPHMEM_NEO4J_SOURCE=maven`, the default) or
taken from the official tarball's `lib/` (`GRAPHMEM_NEO4J_SOURCE=dist`). It listens on
127.0.0.1 only, with authentication disabled, and is detached from the process that started it.

    uri = LocalNeo4j(settings).start()      # idempotent
    LocalNeo4j(settings).stop()
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tarfile
import time
from importlib import resources
from pathlib import Path

from filelock import FileLock

from graphmem.settings import Settings, get_settings

NEO4J_VERSION = "5.26.30"
DIST_URL = f"https://dist.neo4j.org/neo4j-community-{NEO4J_VERSION}-unix.tar.gz"
MAIN_CLASS = "org.neo4j.server.CommunityEntryPoint"
MIN_JAVA = 17
JAVA_HINT = "install Java 17+ (e.g. apt-get install openjdk-17-jre-headless) or set NEO4J_URI to an existing server"
# The JVM flags of Neo4j's own neo4j.conf (server.jvm.additional, as the official launcher and the docker image pass
# them) that matter here; the launcher script is not used. TrustFinalNonStaticFields lets the JIT treat Neo4j's
# final fields as constants ("improves overall performance", neo4j.conf); AlwaysPreTouch commits the heap at start.
JVM_OPTS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+AlwaysPreTouch",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
]
_MARKER = ".complete"  # written in the distribution dir only after a successful fetch


class LocalNeo4jError(RuntimeError):
    """A local Neo4j server could not be obtained, started or stopped; the message says why and what to do."""


def connection_for(settings: Settings | None = None) -> tuple[str, tuple[str, str] | None]:
    """The `(uri, auth)` to connect with: `NEO4J_URI` with `(user, password)` (auth `None` when no
    password is set) if configured, else the locally managed server's bolt URI with no auth."""
    settings = settings or get_settings()
    if settings.neo4j_uri:
        auth = (settings.neo4j_user, settings.neo4j_password) if settings.neo4j_password else None
        return settings.neo4j_uri, auth
    return LocalNeo4j(settings).uri, None


def find_java() -> str:
    """Path of a Java 17+ `java`: `$JAVA_HOME/bin/java` if JAVA_HOME is set, else `java` on PATH.

    Raises LocalNeo4jError if there is none or it is older than Java 17."""
    java_home = os.environ.get("JAVA_HOME")
    if java_home:
        java = str(Path(java_home) / "bin" / "java")
        if not os.access(java, os.X_OK):
            raise LocalNeo4jError(f"JAVA_HOME={java_home} has no bin/java: {JAVA_HINT}")
    else:
        java = shutil.which("java")
        if java is None:
            raise LocalNeo4jError(f"Java not found on PATH: {JAVA_HINT}")
    try:
        out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise LocalNeo4jError(f"could not run {java} -version ({e}): {JAVA_HINT}") from e
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if not m:
        raise LocalNeo4jError(f"could not tell the version of {java}: {JAVA_HINT}")
    major = int(m[2] or 0) if m[1] == "1" else int(m[1])  # "1.8.0_x" is Java 8
    if major < MIN_JAVA:
        raise LocalNeo4jError(f"Neo4j {NEO4J_VERSION} needs Java {MIN_JAVA}+, but {java} is Java {major}: {JAVA_HINT}")
    return java


class LocalNeo4j:
    """Manages one Neo4j server under `settings.home / "neo4j"`, listening on
    `127.0.0.1:settings.local_neo4j_port` with heap `local_neo4j_heap` and page cache
    `local_neo4j_pagecache`. All timeouts are in seconds."""

    def __init__(self, settings: Settings | None = None) -> None:
        self.settings = settings or get_settings()
        self.home = Path(self.settings.home).expanduser().absolute() / "neo4j"
        self.port = self.settings.local_neo4j_port
        self.dist_dir = Path(self.settings.cache_dir).expanduser().absolute() / f"neo4j-{NEO4J_VERSION}"
        self.pid_file = self.home / "run" / "graphmem-server.json"  # {"pid": ..., "port": ...}
        self.console_log = self.home / "logs" / "console.log"  # the JVM's stdout/stderr

    @property
    def uri(self) -> str:
        """The bolt URI the server listens (or would listen) on."""
        return f"bolt://127.0.0.1:{self.port}"

    # --- public API ---------------------------------------------------------------------------
    def start(self, timeout_s: float = 120.0) -> str:
        """Start the server unless it is already running, wait until it answers `RETURN 1`, and return its URI.

        `timeout_s` bounds the wait for the server to answer (seconds); the one-time download of
        the distribution is not counted. If this home's server is already running it is only
        waited for. Raises LocalNeo4jError if Java 17+ is missing, the distribution cannot be
        fetched, the port is taken by another process, or the server does not come up in time
        (the message then ends with the last lines of its log)."""
        with _locked(self.home / "run" / "start.lock"):
            state = self._running_state()
            if state:
                if state["port"] != self.port:
                    raise LocalNeo4jError(
                        f"the local Neo4j in {self.home} is already running on port {state['port']}, "
                        f"not {self.port}; set GRAPHMEM_LOCAL_NEO4J_PORT={state['port']} to use it (as every "
                        f"command with GRAPHMEM_HOME={self.home} must), or stop it first (graphmem neo4j stop, "
                        f"with that port)")
                self._wait_ready(state["pid"], timeout_s)
                return self.uri
            java = find_java()
            if _port_open(self.port):
                raise LocalNeo4jError(
                    f"port {self.port} is already in use by another process; set GRAPHMEM_LOCAL_NEO4J_PORT "
                    f"to a free port, stop that process, or set NEO4J_URI to use an existing server")
            lib = self.ensure_distribution()
            self._write_conf()
            for log in (self.console_log, self.home / "logs" / "neo4j.log"):  # keep one previous run
                if log.exists():
                    log.replace(log.with_name(log.name + ".1"))
            heap = self.settings.local_neo4j_heap
            cmd = [java, f"-Xms{heap}", f"-Xmx{heap}", *JVM_OPTS, "-cp", f"{lib}/*", MAIN_CLASS,
                   f"--home-dir={self.home}", f"--config-dir={self.home / 'conf'}"]
            with open(self.console_log, "ab") as out:
                proc = subprocess.Popen(cmd, cwd=self.home, stdin=subprocess.DEVNULL, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
            self.pid_file.write_text(json.dumps({"pid": proc.pid, "port": self.port}))
            try:
                self._wait_ready(proc.pid, timeout_s, proc)
            except BaseException:
                self._terminate(proc.pid, 20.0, proc)
                self.pid_file.unlink(missing_ok=True)
                raise
            return self.uri

    def stop(self, timeout_s: float = 60.0) -> bool:
        """Stop this home's server: SIGTERM, then SIGKILL after `timeout_s` seconds.

        Returns False if it was not running. Raises LocalNeo4jError if it cannot be stopped."""
        with _locked(self.home / "run" / "start.lock"):
            state = self._running_state()
            if not state:
                self.pid_file.unlink(missing_ok=True)
                return False
            self._terminate(state["pid"], timeout_s)
            self.pid_file.unlink(missing_ok=True)
            return True

    def status(self) -> dict:
        """`{"running", "pid", "uri", "home", "version", "log"}` for this home's server (no network I/O)."""
        state = self._running_state()
        port = state["port"] if state else self.port
        return {"running": state is not None, "pid": state["pid"] if state else None,
                "uri": f"bolt://127.0.0.1:{port}", "home": str(self.home), "version": NEO4J_VERSION,
                "log": str(self.home / "logs" / "neo4j.log")}

    def ensure_distribution(self) -> Path:
        """Fetch the Neo4j jars into the cache once (per `settings.neo4j_source`) and return their directory.

        A marker file is written only after a complete fetch, so an interrupted one is redone.
        Raises LocalNeo4jError if the source is unknown, `mvn` is missing (source "maven") or the
        download fails."""
        lib, marker = self.dist_dir / "lib", self.dist_dir / _MARKER
        if marker.exists():
            return lib
        source = self.settings.neo4j_source  # "maven" or "dist": Settings refuses anything else
        self.dist_dir.mkdir(parents=True, exist_ok=True)
        with _locked(self.dist_dir / ".lock"):  # another process may be fetching right now
            if marker.exists():
                return lib
            partial = self.dist_dir / "lib.partial"
            shutil.rmtree(partial, ignore_errors=True)
            shutil.rmtree(lib, ignore_errors=True)
            (self._fetch_maven if source == "maven" else self._fetch_tarball)(partial)
            if not list(partial.glob("neo4j-*.jar")):
                raise LocalNeo4jError(f"no Neo4j jars were fetched into {partial} (source {source!r})")
            partial.rename(lib)
            marker.write_text(f"{source}\n")
        return lib

    # --- internals ----------------------------------------------------------------------------
    def _fetch_maven(self, dest: Path) -> None:
        mvn = shutil.which("mvn")
        if mvn is None:
            raise LocalNeo4jError("Maven (mvn) is needed to fetch Neo4j from Maven Central: install maven "
                                  "(e.g. apt-get install maven), or set GRAPHMEM_NEO4J_SOURCE=dist to download "
                                  "the official tarball, or set NEO4J_URI to an existing server")
        pom = self.dist_dir / "pom.xml"
        pom.write_bytes(resources.files(__package__).joinpath("pom.xml").read_bytes())
        cmd = [mvn, "-B", "-q", "-f", str(pom), "dependency:copy-dependencies",
               f"-DoutputDirectory={dest}", "-DincludeScope=runtime"]
        try:
            res = subprocess.run(cmd, cwd=self.dist_dir, capture_output=True, text=True, timeout=1800)
        except subprocess.TimeoutExpired as e:
            raise LocalNeo4jError("fetching Neo4j with Maven took over 30 minutes; check access to Maven "
                                  "Central, or set GRAPHMEM_NEO4J_SOURCE=dist or NEO4J_URI") from e
        if res.returncode != 0:
            tail = "\n".join((res.stdout + res.stderr).strip().splitlines()[-15:])
            raise LocalNeo4jError(f"fetching Neo4j {NEO4J_VERSION} with Maven failed (exit {res.returncode}); "
                                  f"check access to Maven Central, or set GRAPHMEM_NEO4J_SOURCE=dist or "
                                  f"NEO4J_URI. mvn said:\n{tail}")

    def _fetch_tarball(self, dest: Path) -> None:
        import httpx

        tarball = self.dist_dir / "download.tar.gz"
        try:
            with httpx.stream("GET", DIST_URL, follow_redirects=True,
                              timeout=httpx.Timeout(30.0, read=120.0)) as r, open(tarball, "wb") as f:
                r.raise_for_status()
                for chunk in r.iter_bytes(1 << 20):
                    f.write(chunk)
            prefix = f"neo4j-community-{NEO4J_VERSION}/lib/"
            dest.mkdir(parents=True)
            with tarfile.open(tarball) as tar:
                for m in tar:
                    if m.isfile() and m.name.startswith(prefix) and m.name.endswith(".jar"):
                        with tar.extractfile(m) as src, open(dest / Path(m.name).name, "wb") as dst:
                            shutil.copyfileobj(src, dst)
        except (httpx.HTTPError, tarfile.TarError, OSError) as e:
            raise LocalNeo4jError(f"downloading {DIST_URL} failed ({e}); check network access, or set "
                                  f"GRAPHMEM_NEO4J_SOURCE=maven or NEO4J_URI") from e
        finally:
            tarball.unlink(missing_ok=True)

    def _write_conf(self) -> None:
        for sub in ("conf", "data", "logs", "run"):
            (self.home / sub).mkdir(parents=True, exist_ok=True)
        s = self.settings
        (self.home / "conf" / "neo4j.conf").write_text("\n".join([
            "# Written by graphmem on every start; edits are overwritten.",
            f"server.directories.data={self.home / 'data'}",
            f"server.directories.logs={self.home / 'logs'}",
            f"server.directories.run={self.home / 'run'}",
            "server.default_listen_address=127.0.0.1",
            f"server.bolt.listen_address=127.0.0.1:{self.port}",
            f"server.bolt.advertised_address=127.0.0.1:{self.port}",
            "server.http.enabled=false",
            "server.https.enabled=false",
            "dbms.security.auth_enabled=false",
            "dbms.usage_report.enabled=false",
            f"server.memory.heap.initial_size={s.local_neo4j_heap}",
            f"server.memory.heap.max_size={s.local_neo4j_heap}",
            f"server.memory.pagecache.size={s.local_neo4j_pagecache}",
            # One plan per query and parameter types, not per size class of each string and list parameter as well
            # (1, 2-10, 11-100, ... items or characters): graphmem's search query took 1.3-1.8 s to plan for every
            # new mix of query length and id-list sizes (graphmem.recall.search.HybridSearch.warm_up).
            "internal.cypher.use_parameter_size=false",
        ]) + "\n")

    def _running_state(self) -> dict | None:
        """The pid file's contents if that process is alive and is this home's Neo4j, else None."""
        try:
            state = json.loads(self.pid_file.read_text())
            pid, port = int(state["pid"]), int(state["port"])
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return {"pid": pid, "port": port} if self._is_our_server(pid) else None

    def _is_our_server(self, pid: int) -> bool:
        try:  # reap it if it is our own exited child, so it doesn't linger as a zombie
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            pass
        proc = Path(f"/proc/{pid}")
        if proc.exists():  # Linux: also rule out zombies and recycled pids
            try:
                if proc.joinpath("stat").read_text().rsplit(")", 1)[1].split()[0] == "Z":
                    return False
                cmdline = proc.joinpath("cmdline").read_bytes().decode(errors="replace")
            except OSError:
                return False
            return MAIN_CLASS in cmdline and f"--home-dir={self.home}\0" in cmdline + "\0"
        return True

    def _wait_ready(self, pid: int, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            if proc is not None and proc.poll() is not None:
                raise LocalNeo4jError(f"Neo4j exited with code {proc.returncode} during start-up.{self._log_tail()}")
            if proc is None and not self._is_our_server(pid):
                raise LocalNeo4jError(f"Neo4j (pid {pid}) exited during start-up.{self._log_tail()}")
            if _port_open(self.port) and _answers(self.uri):
                return
            if time.monotonic() > deadline:
                raise LocalNeo4jError(f"Neo4j (pid {pid}) did not answer on {self.uri} within {timeout_s:.0f} s."
                                      f"{self._log_tail()}")
            time.sleep(0.5)

    def _terminate(self, pid: int, timeout_s: float, proc: subprocess.Popen | None = None) -> None:
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 10.0)):
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                return
            except PermissionError as e:
                raise LocalNeo4jError(f"not allowed to stop Neo4j (pid {pid}): {e}") from e
            deadline = time.monotonic() + wait_s
            while time.monotonic() < deadline:
                if proc is not None:
                    proc.poll()
                if not self._is_our_server(pid):
                    return
                time.sleep(0.2)
        raise LocalNeo4jError(f"Neo4j (pid {pid}) did not exit after SIGKILL")

    def _log_tail(self, lines: int = 20) -> str:
        parts = []
        for log in (self.console_log, self.home / "logs" / "neo4j.log"):
            try:
                text = log.read_text(errors="replace").strip()
            except OSError:
                continue
            if text:
                parts.append(f"\n--- last lines of {log} ---\n" + "\n".join(text.splitlines()[-lines:]))
        return "".join(parts) or f" (no log output in {self.home / 'logs'})"


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    """True if something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return True
    except OSError:
        return False


def _answers(uri: str) -> bool:
    """True if a bolt server at `uri` (no auth) runs `RETURN 1`."""
    import neo4j

    try:
        with neo4j.GraphDatabase.driver(uri, auth=None, connection_timeout=5.0) as driver:
            with driver.session() as session:
                return session.run("RETURN 1 AS one").single()["one"] == 1
    except (neo4j.exceptions.DriverError, neo4j.exceptions.Neo4jError, OSError):
        return False


def _locked(path: Path) -> FileLock:
    """An exclusive lock on `path` (created, with its folder, if missing), held for a `with` block."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(str(path))
