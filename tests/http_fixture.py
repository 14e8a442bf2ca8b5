"""A real graphmem HTTP server on loopback for the whole test session, plus API-key helpers.

`api_url` is the server's base URL (uvicorn in a background thread, the app built by `api.app.create_app`
around the session's `Services`). `client_for(tenant, role)` gives an `httpx.Client` with a fresh key.
"""
from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import httpx
import pytest
import uvicorn

from api.app import create_app
from graphmem.services import Services
from graphmem.settings import Settings
from graphmem.store import Database
from tests.context_fixture import PATIENT_SEARCH


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def services(db: Database, settings: Settings) -> Services:
    """The server's services. Context search gets a generous deadline (`PATIENT_SEARCH`): a shared, noisy CI machine
    must not turn a cold first search into a `degraded` window (the timeout path has its own test in
    test_context_sessions)."""
    return Services(db, settings.model_copy(update=PATIENT_SEARCH))


@contextmanager
def serve(services: Services) -> Iterator[str]:
    """Run the app around `services` with uvicorn in a background thread on a free loopback port; yields its base
    URL and stops the server on exit."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(services), host="127.0.0.1", port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    # the app's start waits up to warm_up_timeout_s (30 s) for Neo4j to plan the hot reads: on a loaded machine
    # with a JVM that just started that can take all of it (a fresh-clone CI run where 30 s in all was too short)
    deadline = time.monotonic() + services.settings.warm_up_timeout_s + 60
    while not server.started:
        if time.monotonic() > deadline:
            raise RuntimeError("the test API server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        # the app's shutdown waits for a keep-warm round in progress (up to its query timeout + 30 s): on a loaded
        # machine a round that replans takes 30 s or more, and a server given up on after 10 s went on using the
        # session's Database after its driver was closed
        thread.join(timeout=services.settings.keep_warm_query_timeout_s + 60)


@pytest.fixture(scope="session")
def api_url(services: Services) -> Iterator[str]:
    with serve(services) as url:
        yield url


@pytest.fixture
def make_key(services: Services) -> Callable[..., str]:
    """make_key(tenant, role="agent") -> a new API key secret for that tenant and role."""
    def make(tenant_id: str, role: str = "agent") -> str:
        return services.keys.create(tenant_id, role, "test")[1]
    return make


@pytest.fixture
def client_for(api_url: str, make_key) -> Iterator[Callable[..., httpx.Client]]:
    """client_for(tenant, role="agent") -> an httpx.Client on the test server, authenticated for that tenant. Its
    timeout (120 s) only guards against a hang: it outlasts the server's own context budget (`PATIENT_SEARCH`)."""
    clients: list[httpx.Client] = []

    def make(tenant_id: str, role: str = "agent") -> httpx.Client:
        c = httpx.Client(base_url=api_url, headers={"Authorization": f"Bearer {make_key(tenant_id, role)}"},
                         timeout=120)
        clients.append(c)
        return c
    yield make
    for c in clients:
        c.close()
