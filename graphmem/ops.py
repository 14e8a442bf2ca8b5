"""Operations helpers: metrics sampled at scrape time (the `/metrics` route calls `services.sample_metrics()`),
the bootstrap admin key ensured at start-up, and the warm-up of the hot reads at start-up (`warm_up`).

`graphmem_jobs{state}` is a gauge of extraction jobs by state over all tenants (one tenant-free count query,
`cypher/ops/jobs_by_state`, through the `extraction_status` index). `graphmem_embedding_model_mismatch` is 1 while
the configured embedder differs from the model recorded for the stored vectors (`vector_search`). Request latency
and LLM tokens are counted where they happen (`api/middleware.py`, the extractors); only gauges that describe
stored state are sampled here.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import get_args

import neo4j

from graphmem.metrics import EMBEDDING_MISMATCH, JOBS
from graphmem.models import EpisodeIn, ExtractionStatus, new_id
from graphmem.errors import Conflict, InvalidInput, NotFound, Unavailable
from graphmem.keys import hash_key
from graphmem.store import Database
from graphmem.timeutil import utcnow

log = logging.getLogger("graphmem.ops")

STATES: tuple[str, ...] = get_args(ExtractionStatus)
"""Every extraction state (pending, running, done, skipped, failed, dead): each is reported, zeros included."""


def sample_jobs(db: Database) -> dict[str, int]:
    """Set `graphmem_jobs{state}` from the database and return {state: jobs}. Raises `neo4j` errors as they come."""
    counts = {r["state"]: r["jobs"] for r in db.rows("ops/jobs_by_state", states=list(STATES))}
    for state in STATES:
        JOBS.labels(state).set(counts.get(state, 0))
    return {s: counts.get(s, 0) for s in STATES}


def vector_search(services) -> str:
    """"ok" when search can use vectors, else "off: <reason>" (no embedder configured, or a model mismatch naming
    the settings and the command that fix it: `graphmem.recall.embedding_guard`). Sets
    `graphmem_embedding_model_mismatch`. Builds the recall service if it was not built yet. Raises `Unavailable`
    when Neo4j cannot answer the check."""
    hybrid = services.recall.hybrid
    try:
        problem = hybrid.guard.problem()
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
        raise Unavailable(f"the embedding model check failed: {exc}") from exc
    EMBEDDING_MISMATCH.set(1 if problem and hybrid.embedder is not None else 0)
    return "ok" if problem is None else "off: " + problem


def build(services) -> Callable[[], dict[str, int] | None]:
    """`Services` factory: `services.sample_metrics()` samples the gauges (jobs by state, embedding model
    mismatch) and returns the jobs by state. When Neo4j cannot answer, the gauges keep their last values, a warning
    is logged and None is returned, so `/metrics` still serves the counters. A ping comes first, so a scrape while
    Neo4j is down does not wait out the transaction retries (`graphmem.store.db`)."""
    def sample() -> dict[str, int] | None:
        try:
            services.db.ping()
            vector_search(services)
            return sample_jobs(services.db)
        except (Unavailable, neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
            log.warning("metrics sampling skipped: %s", exc)
            return None
    return sample


BOOTSTRAP_TENANT = "admin"


def ensure_bootstrap_admin(db: Database, secret: str | None) -> bool:
    """Make `secret` (settings.bootstrap_admin_key) a working admin key of tenant "admin", once: a key already
    stored with that secret is left alone, revoked or not (a revoked bootstrap key stays revoked). Returns True when
    a key was created. Raises `InvalidInput` for a secret shorter than 24 characters (too guessable)."""
    if not secret:
        return False
    if len(secret) < 24:
        raise InvalidInput("GRAPHMEM_BOOTSTRAP_ADMIN_KEY must be at least 24 characters", field="bootstrap_admin_key")
    if db.one("keys/by_hash", hash=hash_key(secret)) is not None:
        return False
    db.execute("keys/create", tenant_id=BOOTSTRAP_TENANT, id=new_id(), role="admin", name="bootstrap",
               hash=hash_key(secret), prefix=secret[:8], now=utcnow())
    log.info("bootstrap admin key created for tenant %r", BOOTSTRAP_TENANT)
    return True


WARM_UP_TENANT = " warm-up"
"""The tenant the warm-up reads: no API key can name it (surrounding whitespace:
`graphmem.store.require_named_tenant`), so it holds nothing and the warm-up reads no one's data."""


def warm_up(services, writes: bool = True) -> None:
    """Have Neo4j plan what a request runs first, before the first request: its API key, the search in each shape
    requests send (`RecallService.warm_up`), a context window's reads (its check for a held session past
    retention, and its state read: a read-only window of an unknown session, which writes nothing), with `writes`
    a turn's and an episode's writes (`warm_up_writes`), a user's memories (`Memories.warm_up`), then the entity
    search and the multi-hop reads (`RecallService.warm_up_paths`). Cold, Neo4j plans each shape of the search in
    1.3-2.5 s (2-core machine), past a window's search timeout (`context_search_timeout_s`, 0.3 s), so the first
    windows after a start came back without their retrieved tier; a window's reads come first, so they are planned
    within the start's wait (`warm_up_timeout_s`) on a slow machine. Runs in `Database.replanning()`: the warmed
    reads replan a plan Neo4j deems stale, which requests then do not (`api.app.keep_warm`, whose rounds leave the
    writes out). Raises what those reads raise (Neo4j not reachable: `Unavailable`)."""
    from graphmem.context.models import ContextRequest

    with services.db.replanning():
        services.keys.authenticate("warm-up: not a key")
        services.recall.warm_up(WARM_UP_TENANT)
        services.governance.sweeper.refuse_held_sessions(WARM_UP_TENANT, ["warm-up"], utcnow())
        services.context.assemble(WARM_UP_TENANT, "warm-up", ContextRequest(budget_tokens=1000,
                                                                            system_policy="warm up"), read_only=True)
        if writes:
            warm_up_writes(services)
        services.governance.memories.warm_up(WARM_UP_TENANT)
        services.recall.warm_up_paths(WARM_UP_TENANT)   # last: a window's reads first, within the start's wait


def warm_up_writes(services) -> None:
    """Run the writes of a turn (`POST /v1/sessions/{id}/turns`: a user's message and an assistant's chatter
    reply), of the same turn with a goal pin, of a later turn's session check and of an episode (`POST
    /v1/episodes`) in three shapes (in a session of a user, in a session without one, in none) for the warm-up
    tenant, every transaction rolled back (`Database.rolling_back`): nothing is stored, but Neo4j has planned each
    statement with the parameter types and transaction state a request brings (a first turn after a start spent
    1.3-1.9 s planning, `episodes/append` alone 0.4-0.6 s for each shape: a null parameter is another type;
    docs/benchmarks/recall.md, "The first turn after a start"). The turn with the pin plans the pin's checks and
    locks, then stops where the pin is written: its session, created by a transaction rolled back before, is not
    there (`NotFound`, expected), so a first pin write still plans its own two statements. Nothing here calls the
    embedder: the episodes it reads back to embed are not there either. A sample the settings refuse (say
    `max_episode_chars` below its length) ends the writes' warm-up with a warning, not the warm-up: the reads after
    it are still planned. Raises what Neo4j raises (`Unavailable`, `QueryTimedOut`)."""
    from graphmem.context.models import TurnIn

    now = utcnow().isoformat()
    turn = {"idempotency_key": "warm-up", "user_id": "warm-up",
            "episodes": [{"role": "user", "content": "warm up", "occurred_at": now},
                         {"role": "assistant", "content": "Thanks!", "occurred_at": now}]}
    pinned = {**turn, "pins": [{"key": "goal", "value": {"type": "goal", "value": "warm up"}}]}
    episodes = [EpisodeIn(kind="message", role="user", content="warm up", occurred_at=now, idempotency_key="warm-up",
                          **scope) for scope in ({"session_id": "warm-up", "user_id": "warm-up"},
                                                 {"session_id": "warm-up"}, {})]
    with services.db.rolling_back():
        try:
            services.context.append_turn(WARM_UP_TENANT, "warm-up", TurnIn.model_validate(turn), agent_id="warm-up")
            try:
                services.context.append_turn(WARM_UP_TENANT, "warm-up", TurnIn.model_validate(pinned),
                                             agent_id="warm-up")
            except NotFound as exc:
                if exc.field != "session_id":
                    raise
            services.context.sessions.reset_if_expired(WARM_UP_TENANT, "warm-up")   # a later turn's session check
            for episode in episodes:
                services.ingest.append_episode(WARM_UP_TENANT, episode)
        except (InvalidInput, NotFound, Conflict) as exc:
            log.warning("warm-up: the settings refuse its sample turn (%s: %s); a turn's writes are planned by the "
                        "first turn instead", type(exc).__name__, exc)
