"""`create_app`: the FastAPI application, versioned under `/v1`.

Routers live one per area in `api/routes/` and are listed in `api.routes.ROUTERS`. The app owns one `Services`
(database + services) for its lifetime; shutdown closes it after in-flight requests finish (uvicorn drains
connections before the lifespan ends).
"""
from __future__ import annotations

import gc
import importlib
import logging
import threading
import time
from collections.abc import Callable
from contextlib import asynccontextmanager

from fastapi import FastAPI

from api import problems, request_shape
from api.middleware import RequestContext
from api.routes import ROUTERS
from graphmem import ops
from graphmem.errors import QueryTimedOut, Unavailable
from graphmem.services import Services
from graphmem.settings import KEEP_WARM_QUERY_TIMEOUT_MAX_S, Settings, get_settings

log = logging.getLogger("graphmem.app")

DESCRIPTION = """Temporal knowledge-graph memory for AI agents.

Every route needs an API key (`Authorization: Bearer <key>` or `X-API-Key`). The key decides the tenant.
Errors are `application/problem+json` and name the field at fault."""


def create_app(services: Services | None = None, settings: Settings | None = None,
               with_worker: bool = False) -> FastAPI:
    """Build the app. With `services` given (tests, embedding), the app uses and does not close it.

    `with_worker` runs an extraction worker and the retention sweeper in this process (`graphmem serve
    --with-worker`, as `graphmem worker` runs them): started with the app, stopped at shutdown (after in-flight
    requests finish), which releases the jobs the worker had claimed.
    """
    settings = settings or (services.settings if services else get_settings())
    owned = services is None

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        try:
            app.state.services = services or Services.from_settings(settings)
        except Unavailable as exc:   # Neo4j down at start: one plain line before uvicorn's traceback
            log.error("graphmem cannot start: %s", exc.detail)
            raise
        # The embedder is built (a local model loaded) now, not inside the first request: a configured model that is
        # missing stops the start with its message instead of failing most routes with 503s, and the first context
        # call does not spend its search time budget loading the model.
        app.state.services.embedder
        if owned:
            ops.ensure_bootstrap_admin(app.state.services.db, settings.bootstrap_admin_key)
        app.state.warm_up = warm_up(app.state.services, settings.warm_up_timeout_s)
        # Every request's shape check reads the OpenAPI schema, which FastAPI builds on first use: built now, not
        # in the first request (a context window paid 0.4-0.6 s for it).
        request_shape.shapes(app)
        if with_worker:
            app.state.on_shutdown = [*getattr(app.state, "on_shutdown", []), *start_worker(app.state.services)]
        if settings.keep_warm_interval_s > 0:   # last: nothing after it can fail the start and leave it running
            app.state.on_shutdown = [*getattr(app.state, "on_shutdown", []),
                                     keep_warm(app.state.services, settings.keep_warm_interval_s)]
        # What exists now (modules, settings, the driver) lives as long as the process: gc.freeze (Python docs, module
        # gc) moves it out of the cyclic collector's generations, so full collections scan only what requests made.
        # With 8 concurrent 3-hop recalls the p95 fell from ~58 to ~49 ms (bench probe, docs/benchmarks/recall.md).
        gc.freeze()
        try:
            yield
        finally:
            on_shutdown = getattr(app.state, "on_shutdown", [])
            for hook in on_shutdown:
                hook()
            if owned:
                app.state.services.close()

    # redirect_slashes off: a path with a trailing slash is an unknown route (404 naming `path`), not a 307 to the
    # route built from the request's Host header, sent before any key is checked
    app = FastAPI(title="graphmem", version="0.1.0", description=DESCRIPTION, lifespan=lifespan,
                  openapi_url="/v1/openapi.json", docs_url="/v1/docs", redoc_url=None, redirect_slashes=False)
    if services is not None:
        app.state.services = services
    problems.install(app)
    app.add_middleware(RequestContext, max_body_bytes=settings.max_body_bytes)
    for name in ROUTERS:
        app.include_router(importlib.import_module(f"api.routes.{name}").router)
    logging.getLogger("graphmem").setLevel(logging.INFO)
    return app


class WarmUp:
    """The start's warm-up as `GET /readyz` reports it: `state` is "off" (`GRAPHMEM_WARM_UP_TIMEOUT_S` = 0),
    "running", "done" or "failed: <error>"."""

    def __init__(self, state: str = "off"):
        self.state = state


def warm_up(services: Services, timeout_s: float) -> WarmUp:
    """Let Neo4j plan the hot reads before the first request (`graphmem.ops.warm_up`), waiting at most
    `timeout_s` seconds: a Neo4j that is slow or down at start delays the start by no more than that (the warm-up
    then finishes, or fails with a warning, in the background, and logs when it does). Returns its `WarmUp`,
    whose state `GET /readyz` reports: until it is "done", the first context windows may lose their retrieved
    tier to the search timeout. Each of its reads runs with the keep-warm rounds' transaction timeout
    (`settings.keep_warm_query_timeout_s`; `Database.timeout`): a Neo4j that does not answer one (a read waiting for
    a lock it never gets) ends the warm-up there as failed, logged as a warning, instead of hanging its thread."""
    status = WarmUp()
    if timeout_s <= 0:
        return status
    started = time.monotonic()
    waited = threading.Event()   # set once the start stopped waiting: later news is logged as background news
    query_timeout_s = services.settings.keep_warm_query_timeout_s

    def run() -> None:
        try:
            with services.db.timeout(query_timeout_s):
                ops.warm_up(services)
            status.state = "done"
            if waited.is_set():
                log.info("warm-up done in the background, %.1f s after the start", time.monotonic() - started)
        except QueryTimedOut as exc:   # Neo4j stuck (a lock held for long): the keep-warm rounds plan the reads
            status.state = f"failed: {type(exc).__name__}: {exc}"
            log.warning("warm-up timed out: %s (GRAPHMEM_KEEP_WARM_QUERY_TIMEOUT_S); serving without it",
                        exc.detail)
        except Exception as exc:   # never fatal: the first windows are merely slower
            status.state = f"failed: {type(exc).__name__}: {exc}"
            log.warning("warm-up failed: %s: %s", type(exc).__name__, exc)
    log.info("planning the hot reads before serving (up to %g s; GRAPHMEM_WARM_UP_TIMEOUT_S)", timeout_s)
    status.state = "running"
    thread = threading.Thread(target=run, name="graphmem-warm-up", daemon=True)
    thread.start()
    thread.join(timeout_s)
    waited.set()
    took = time.monotonic() - started
    if thread.is_alive():
        log.warning("warm-up still running after %.1f s; serving now, it finishes in the background (GET /readyz "
                    "reports it)", took)
    elif status.state == "done":
        log.info("warm-up done in %.1f s", took)
    return status


def keep_warm(services: Services, interval_s: float, query_timeout_s: float | None = None) -> Callable[[], None]:
    """Run the warm-up reads (`graphmem.ops.warm_up`) again every `interval_s` seconds in a background thread; returns
    the function that stops it. Neo4j replans a cached plan once the statistics it was made from have changed by
    more than `dbms.cypher.statistics_divergence_threshold` (0.75, decaying to 0.1 over about 7 hours) and
    `dbms.cypher.min_replan_interval` (10 s) has passed, and the query that finds it stale waits for the new plan:
    1.2-1.4 s for the search, so a context window that met it lost its retrieved tier to the 0.3 s timeout
    (docs/benchmarks/recall.md, "Replans after writes"). Run every few seconds, the warm-up is nearly always the
    query that finds the plan stale, but not always: a window's search that came first (keep-warm rounds are slow
    on a loaded machine) spent 5 s replanning in CI. So while this runs, the warmed reads (every read the warm-up
    makes: the API key, a window's reads, the search, the entity search and the multi-hop reads) use the cached
    plan however stale (`Database.skip_replans`, `CYPHER replan=skip`) and only these rounds replan. Each read of a
    round runs with a transaction timeout of `query_timeout_s` seconds (default `settings.keep_warm_query_timeout_s`;
    `Database.timeout`): a Neo4j that does not answer (a read waiting for a lock it never gets) ends the round
    there, logged as a warning for the first such round in a row (at debug level for the next ones, and at info
    level once a round succeeds again), and the next round runs; nor does a read that never ends keep a stop
    waiting (it waits for the round in progress, up to `query_timeout_s` + 30 s). After a timed-out round the
    next round's timeout doubles, up to `KEEP_WARM_QUERY_TIMEOUT_MAX_S` (600 s), and a round that completes sets it
    back to `query_timeout_s`: Neo4j caches no plan for a read it ended while planning, so with a fixed timeout
    shorter than a cold plan (a loaded machine) every round timed out the same way and the rounds never converged.
    A round that failed otherwise is logged at debug level and the next one tried. The rounds leave out the start's
    rolled-back writes (`ops.warm_up_writes`): run every round they doubled an idle server's CPU and its Neo4j's
    (0.9 -> 2.0 and 2.7 -> 6.4 CPU-s a minute), while a turn that meets a stale write plan replans it anyway, those
    not being sent with `replan=skip`."""
    stop = threading.Event()
    timeout_s = query_timeout_s or services.settings.keep_warm_query_timeout_s
    release_plans = services.db.skip_replans()

    def round_timeout_s(timed_out: int) -> float:   # doubled after each timed-out round in a row, capped
        return min(timeout_s * 2 ** min(timed_out, 32), max(timeout_s, KEEP_WARM_QUERY_TIMEOUT_MAX_S))

    def run() -> None:
        timed_out = 0     # rounds in a row that Neo4j ended past the timeout
        while not stop.wait(interval_s):
            try:
                with services.db.timeout(round_timeout_s(timed_out)):
                    ops.warm_up(services, writes=False)
            except QueryTimedOut as exc:   # Neo4j stuck (a lock held for long): logged, and the next round runs
                timed_out += 1
                (log.warning if timed_out == 1 else log.debug)(
                    "keep-warm round %d timed out: %s (GRAPHMEM_KEEP_WARM_QUERY_TIMEOUT_S); next round in %g s, "
                    "with a %g s timeout", timed_out, exc.detail, interval_s, round_timeout_s(timed_out))
                continue
            except Exception as exc:   # Neo4j down for a while: /readyz reports it, requests get their 503s
                log.debug("keep-warm round failed: %s: %s", type(exc).__name__, exc)
                continue
            if timed_out:
                log.info("keep-warm rounds back after %d timed out", timed_out)
                timed_out = 0
    thread = threading.Thread(target=run, name="graphmem-keep-warm", daemon=True)
    thread.start()

    def stop_keep_warm() -> None:
        stop.set()
        thread.join(timeout=timeout_s + 30)
        release_plans()
    return stop_keep_warm


def start_worker(services: Services) -> list[Callable[[], object]]:
    """Start what `graphmem worker` runs, in background threads of this process: the extraction worker and the
    retention sweeper (every GRAPHMEM_SWEEP_INTERVAL_S seconds). Returns the calls that stop them, in order."""
    from graphmem.ingest.worker import Worker
    worker = Worker(services)
    worker.start()
    return [services.governance.sweeper.start(), worker.stop]
