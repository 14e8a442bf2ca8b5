"""`Database`: a Neo4j driver plus named-query execution with the tenant guard.

Every query is looked up by name in `cypher/`; if its text uses `$tenant_id`, the call must pass a
non-empty `tenant_id` or `TenantRequired` is raised before anything is sent to the server.
Transactions use the driver's managed `execute_read`/`execute_write`, run again here (tenacity, jittered exponential
back-off) on transient errors such as a deadlock for up to `TRANSIENT_RETRY_S` (concurrent writers to one subject
on a loaded machine), and on a lost or refused connection for only `unavailable_retry_s` (default 5 s: a restart's
blip, not an outage; the driver's own loop, which this replaces, waited out 120 s and more for a server that was
down, so every request hung for minutes before its 503). Work functions must be idempotent within a retry; a query
that ran out of transaction memory is not retried (it would fill the pool again). What still fails after the
retries because the server is unreachable or overloaded (`ServiceUnavailable`, `SessionExpired`, a
`TransientError` such as a full transaction memory pool) leaves this module as `Unavailable` (HTTP 503), naming the
cause; any other server error (a Cypher or constraint error) stays the driver's. Inside `Database.timeout(seconds)`
each transaction has that Neo4j transaction timeout, and one Neo4j ends past it leaves as `QueryTimedOut`.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import neo4j
import tenacity
from neo4j import GraphDatabase, ManagedTransaction
from pydantic import BaseModel

import cypher
from graphmem.errors import Conflict, InvalidInput, QueryTimedOut, TenantRequired, Unavailable
from graphmem.identifiers import blank
from graphmem.models import path_segment
from graphmem.settings import Settings

T = TypeVar("T")


def require_tenant(tenant_id: Any) -> str:
    """Return `tenant_id` if it is a non-empty string, else raise `TenantRequired`."""
    if not isinstance(tenant_id, str) or blank(tenant_id):
        raise TenantRequired()
    return tenant_id


def require_named_tenant(tenant_id: Any) -> str:
    """`require_tenant`, and the id must be able to name the tenant in an admin route's path (`path_segment`:
    1-200 characters, no surrounding whitespace, '/' or control characters), else `InvalidInput` (field
    `tenant_id`). For the records an admin writes for a tenant (keys, retention settings, legal holds): no key can
    ever belong to another tenant id, so its records would be unreachable."""
    require_tenant(tenant_id)
    try:
        return path_segment(tenant_id, "a tenant id")
    except ValueError as exc:
        raise InvalidInput(str(exc), field="tenant_id") from None


def tenant_token(tenant_id: str) -> str:
    """The tenant id as one Lucene token ("tnt" + its letters and digits, lower-cased), stored as `tenant_token` on
    searchable nodes so full-text queries can require the tenant inside the index (`+tenant_token:...`). Two tenant
    ids that differ only in punctuation share a token; every query still filters on `tenant_id` exactly."""
    return "tnt" + "".join(c for c in require_tenant(tenant_id).lower() if c.isalnum())


_UNAVAILABLE = (neo4j.exceptions.TransientError, neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired)
_TIMEOUT: contextvars.ContextVar[float | None] = contextvars.ContextVar("graphmem_tx_timeout", default=None)
"""The transaction timeout (seconds) `Database.timeout` set for the transactions the current context runs."""
_REPLANNING: contextvars.ContextVar[bool] = contextvars.ContextVar("graphmem_replanning", default=False)
"""Inside `Database.replanning()`: warmed reads replan (and parse their `CYPHER replan=skip` form) as they run."""
_ROLLING_BACK: contextvars.ContextVar[bool] = contextvars.ContextVar("graphmem_rolling_back", default=False)
"""Inside `Database.rolling_back()`: every write transaction is rolled back once its work function returns."""
# Neo4j ended a transaction that ran past its timeout: while it ran, or (LockClientStopped) while it waited for a lock
_TIMED_OUT = ("Neo.ClientError.Transaction.TransactionTimedOut",
              "Neo.ClientError.Transaction.TransactionTimedOutClientConfiguration",
              "Neo.ClientError.Transaction.LockClientStopped")
# The query needed more memory than the server lets one transaction or all of them hold
# (db.memory.transaction.max / dbms.memory.transaction.total.max): running it again at once fills the pool again.
_MEMORY = ("Neo.TransientError.General.MemoryPoolOutOfMemoryError",
           "Neo.TransientError.General.TransactionMemoryLimit")

_OUT_OF_MEMORY = ("the query needed more memory than Neo4j allows a transaction; narrow it (fewer hops, predicates, "
                  "a smaller limit) or raise dbms.memory.transaction.total.max")


_GONE = "Neo.ClientError.Statement.EntityNotFound"
"""A node or relationship the transaction had matched was deleted before it could be read or locked ("Unable to load
NODE ..."): Neo4j reads committed data without locks (read committed), so a write that found an entity (entity
resolution) can be overtaken by a concurrent erasure (`POST /v1/forget`) that deletes it before the write links to
it. The server classifies it as a client error and the driver does not retry it, but the statement was right: the
whole transaction run again reads the graph as the deletion left it (and creates the entity anew). When the
deletion committed before the write's next statement ran, that statement matches nothing instead, and the work
function says so with `EntityGone` (`graphmem.store.facts.assert_batch`), treated alike. Tried `GONE_TRIES` times in
all; a write still failing so ends as `Conflict` (409)."""
GONE_TRIES = 5
_GONE_DETAIL = ("something this request read was deleted by a concurrent write (e.g. a forget) while it ran, "
                f"{GONE_TRIES} times in a row; nothing was written: try again")


class EntityGone(Exception):
    """Raised by a work function that found an entity it had resolved earlier in the transaction deleted since (a
    statement that matched it by id matched nothing): retried and ended as `_GONE` is."""


def _gone(exc: BaseException) -> bool:
    """True for `_GONE`, raised by the server or as the cause of the driver's failed result, and for `EntityGone`."""
    return isinstance(exc, EntityGone) or _GONE in (getattr(exc, "code", None), getattr(exc.__cause__, "code", None))


def _failed_on_transient(exc: BaseException) -> bool:
    """True for the driver's `ResultFailedError` whose cause is a retryable error other than running out of memory:
    a managed transaction whose query hit a deadlock while its records were fetched can, on rollback, fetch that
    result again and raise this in place of the deadlock, which the driver then does not retry (neo4j 5.28; seen
    once in a fresh-clone CI run: concurrent retries of one turn answered 500)."""
    cause = exc.__cause__
    return (isinstance(exc, neo4j.exceptions.ResultFailedError) and isinstance(cause, neo4j.exceptions.Neo4jError)
            and cause.is_retryable() and getattr(cause, "code", None) not in _MEMORY)


TRANSIENT_RETRY_S = 120.0
"""How long a managed transaction is run again after transient errors (deadlocks between concurrent writers to one
subject; the driver's own default is 30 s, which a loaded 2-core machine outlasted)."""
_LOST = (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired)
_DOWN = ("Neo.TransientError.General.DatabaseUnavailable",)
"""Transient errors of a server that cannot serve now (starting or stopping): tried again as briefly as a lost
connection, not as long as a deadlock."""
log = logging.getLogger("graphmem.store")


def _retryable(exc: BaseException) -> bool:
    """A managed transaction that ended in `exc` may run again: what the driver's own loop ran again (its
    `is_retryable`: a lost or refused connection, a transient error such as a deadlock) other than running out of
    memory (`_OutOfMemory` is none of these), `_failed_on_transient`'s failed result, and an entity deleted by a
    concurrent transaction (`_GONE`)."""
    if _failed_on_transient(exc) or _gone(exc):
        return True
    return (isinstance(exc, (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError)) and exc.is_retryable()
            and getattr(exc, "code", None) not in _MEMORY)


class _OutOfMemory(Exception):
    """A query of a managed transaction ran out of transaction memory: raised in place of the driver's
    `TransientError` so that the driver does not retry it (running it again at once fills the pool again, and the
    retries went on for `max_transaction_retry_time`, two minutes)."""

    def __init__(self, error: neo4j.exceptions.Neo4jError):
        super().__init__(str(error))
        self.error = error


class _Undone(Exception):
    """Ends a write transaction of `Database.rolling_back()` (a managed transaction whose work function raises is
    rolled back) and carries what the work function returned."""

    def __init__(self, result: Any):
        super().__init__("rolled back")
        self.result = result


def _undone(work: Callable[["Tx"], T]) -> Callable[["Tx"], T]:
    def run(tx: "Tx") -> T:
        raise _Undone(work(tx))
    return run


def _no_memory_retry(work: Callable[["Tx"], T]) -> Callable[[ManagedTransaction], T]:
    """`work` as a managed transaction function whose out-of-memory errors end the transaction (`_OutOfMemory`),
    with the transaction timeout `Database.timeout` set, if any (the driver's `unit_of_work`)."""
    def run(tx: ManagedTransaction) -> T:
        try:
            return work(Tx(tx))
        except neo4j.exceptions.TransientError as exc:
            if getattr(exc, "code", None) in _MEMORY:
                raise _OutOfMemory(exc) from exc
            raise
    timeout = _TIMEOUT.get()
    return run if timeout is None else neo4j.unit_of_work(timeout=timeout)(run)


def _query(text: str) -> str | neo4j.Query:
    """An auto-commit transaction's query, with the transaction timeout `Database.timeout` set, if any."""
    timeout = _TIMEOUT.get()
    return text if timeout is None else neo4j.Query(text, timeout=timeout)


@contextlib.contextmanager
def _unavailable() -> Iterator[None]:
    """Turn what is left of a transient or connection error after the retries into `Unavailable`, of a
    concurrent deletion (`_GONE`) into `Conflict`, and a transaction Neo4j ended past the timeout `Database.timeout`
    set into `QueryTimedOut`."""
    try:
        yield
    except _OutOfMemory as exc:
        raise Unavailable(_OUT_OF_MEMORY) from exc.error
    except _UNAVAILABLE as exc:
        if getattr(exc, "code", None) in _MEMORY:
            raise Unavailable(_OUT_OF_MEMORY) from exc
        # a server's error carries its message; a driver's own (no connection) only a GQL placeholder there, and
        # its text spans lines: one line in a problem's detail and a command's error
        reason = " ".join(((exc.message if isinstance(exc, neo4j.exceptions.Neo4jError) else None) or str(exc)).split())
        raise Unavailable(f"Neo4j could not run the query now ({type(exc).__name__}: {reason}); try again") from exc
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.ResultFailedError, EntityGone) as exc:
        timeout = _TIMEOUT.get()
        if timeout is not None and getattr(exc, "code", None) in _TIMED_OUT:
            raise QueryTimedOut(f"Neo4j did not finish the query within its {timeout:g} s timeout") from exc
        if not _gone(exc):
            raise
        raise Conflict(_GONE_DETAIL) from exc


def live(node: dict[str, Any] | None, *keys: str) -> dict[str, Any] | None:
    """A node's map read without a lock, or None when it is gone: a node another transaction deletes while a read
    projects it comes back with none or only some of its properties (Neo4j reads committed data, property by
    property), and counts as absent unless every one of `keys` (default: "id") is set. Seen as a 500 among concurrent
    tries of a turn that deletes a pin (a KeyError on its version). A record of one pydantic model: `whole`."""
    return node if node and all(node.get(k) is not None for k in keys or ("id",)) else None


def whole(record: dict[str, Any] | None, model: type[BaseModel]) -> bool:
    """Whether `record`, a node's map projected without a lock, holds every field `model` requires (not None). A node
    another transaction deletes while a read projects it comes back with none or only some of its properties
    (Neo4j reads committed data, property by property), and counts as absent; a stored node always has them, since
    every write validates through the same models. Seen as 422s listing a Fact's or an Entity's required fields in
    about 1 search or neighbourhood read of 500-1,000 while facts of the same entities were being forgotten, and
    among concurrent tries of an API write whose failing tries delete their record (an Episode's fields)."""
    return record is not None and all(record.get(name) is not None for name in _required(model))


@functools.cache
def _required(model: type[BaseModel]) -> tuple[str, ...]:
    """The names of `model`'s required fields."""
    return tuple(name for name, info in model.model_fields.items() if info.is_required())


SKIP_REPLAN = "CYPHER replan=skip\n"
"""The query option that runs a statement on its cached plan however stale (`Database.read_one`)."""


def _forms(text: str, warmed: bool, skip_replan: bool) -> tuple[str, ...]:
    """The texts a read of `text` runs, in order (`Database.read_one`): a warmed read inside `Database.replanning()`
    runs plainly (replanning a stale plan) and then as `CYPHER replan=skip` (parsing that text); otherwise with
    the option while `skip_replan` holds; any other read, plainly."""
    if not warmed:
        return (text,)
    if _REPLANNING.get():
        return (text, SKIP_REPLAN + text)
    return (SKIP_REPLAN + text,) if skip_replan else (text,)


def _checked(name: str, params: dict[str, Any]) -> str:
    text = cypher.query(name)
    if "$tenant_id" in text:
        require_tenant(params.get("tenant_id"))
    return text


class Tx:
    """A transaction handle that only runs named queries. Passed to work functions."""

    def __init__(self, tx: ManagedTransaction):
        self._tx = tx

    def rows(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run query `name`; return its records as dicts. Queries return maps and scalars, never nodes, so the
        record's values are taken as they are (`Record.data()` would walk every value to convert graph types)."""
        return self._rows((_checked(name, params),), params)

    def one(self, name: str, /, **params: Any) -> dict[str, Any] | None:
        """Run query `name`; return the first record as a dict, or None."""
        rec = self._tx.run(_checked(name, params), params).single(strict=False)
        return dict(rec.items()) if rec else None

    def _rows(self, texts: tuple[str, ...], params: dict[str, Any]) -> list[dict[str, Any]]:
        """The records of the last of `texts` (`_forms`), each run in turn."""
        rows: list[dict[str, Any]] = []
        for text in texts:
            rows = [dict(r.items()) for r in self._tx.run(text, params)]
        return rows

    def run(self, name: str, /, **params: Any) -> None:
        """Run query `name` for its effects."""
        self._tx.run(_checked(name, params), params).consume()


class Database:
    """Owns one `neo4j.Driver` (thread-safe, pooled). Create once per process; `close()` at shutdown."""

    def __init__(self, uri: str, auth: tuple[str, str] | None, database: str = "neo4j", *,
                 unavailable_retry_s: float = 5.0, **driver_kwargs: Any):
        self.uri = uri
        self.database = database
        self.unavailable_retry_s = unavailable_retry_s
        driver_kwargs.setdefault("notifications_min_severity", "OFF")
        # one attempt per execute_read/execute_write: `_retrying` runs it again, with a deadline per kind of error
        driver_kwargs.setdefault("max_transaction_retry_time", 0.0)
        self.driver = GraphDatabase.driver(uri, auth=auth, **driver_kwargs)
        self._skippers = 0
        self._skippers_lock = threading.Lock()

    @property
    def skip_replan(self) -> bool:
        """True while something else replans the warmed reads (`skip_replans`: the API's keep-warm,
        `api.app.keep_warm`): a warmed read (`read_one` / `rows` with `warmed=True`) then runs on its cached plan
        however stale, and only the warm-up's reads (`replanning`) replan. Off by default: a process that reads
        without a keep-warm beside it would otherwise keep plans made on an empty database."""
        return self._skippers > 0

    def skip_replans(self) -> Callable[[], None]:
        """Have warmed reads skip replans (`skip_replan`) until the returned function is called. Counted: two
        keep-warms over one `Database` (two apps on one `Services`, tests) each hold it, and the first to stop
        does not turn it off for the other. The returned function releases once, however often it is called."""
        with self._skippers_lock:
            self._skippers += 1
        released = False

        def release() -> None:
            nonlocal released
            with self._skippers_lock:
                if not released:
                    released = True
                    self._skippers -= 1
        return release

    def _retrying(self, attempt: Callable[[], T]) -> T:
        """`attempt()` run again while it fails with a `_retryable` error: for up to `unavailable_retry_s` seconds
        from the first try when the connection is lost or refused or the database is unavailable (starting or
        stopping), `TRANSIENT_RETRY_S` otherwise (a deadlock), and for `GONE_TRIES` tries when what it read was
        deleted concurrently (`_GONE`), with jittered exponential waits (0.1 s doubling, at most 2 s). The last
        error is raised."""
        def stop(state: tenacity.RetryCallState) -> bool:
            exc = state.outcome.exception()
            if _gone(exc):
                return state.attempt_number >= GONE_TRIES
            lost = isinstance(exc, _LOST) or getattr(exc, "code", None) in _DOWN
            return state.seconds_since_start >= (self.unavailable_retry_s if lost else TRANSIENT_RETRY_S)
        return tenacity.Retrying(retry=tenacity.retry_if_exception(_retryable), stop=stop, reraise=True,
                                 wait=tenacity.wait_random_exponential(multiplier=0.1, max=2),
                                 before_sleep=tenacity.before_sleep_log(log, logging.DEBUG))(attempt)

    @classmethod
    def from_settings(cls, settings: Settings) -> "Database":
        """Connect to `NEO4J_URI` when set, else to the locally managed server (`graphmem neo4j start`)."""
        from graphmem.localneo4j import connection_for

        uri, auth = connection_for(settings)
        return cls(uri, auth, settings.neo4j_database, unavailable_retry_s=settings.neo4j_unavailable_retry_s)

    def close(self) -> None:
        self.driver.close()

    def ping(self) -> None:
        """Raise `Unavailable` unless the server answers a trivial query."""
        try:
            self.driver.verify_connectivity()
        except (neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.AuthError, OSError) as exc:
            raise Unavailable(f"Neo4j at {self.uri} is not reachable: {exc}") from exc

    @staticmethod
    @contextlib.contextmanager
    def timeout(seconds: float) -> Iterator[None]:
        """Within the block, every transaction this context (thread) starts through a `Database` (`read`, `write`,
        `read_one`, `stream` and the helpers over them) has a timeout of `seconds` (> 0): Neo4j ends one still
        running then, also one waiting for a lock, and the call raises `QueryTimedOut` (not retried). Nested
        blocks: the innermost wins. A thread started inside does not inherit it unless it runs in a copy of the
        context (`contextvars.copy_context`). Raises `ValueError` for `seconds` <= 0."""
        if not seconds > 0:
            raise ValueError(f"a transaction timeout must be > 0 seconds, not {seconds!r}")
        token = _TIMEOUT.set(float(seconds))
        try:
            yield
        finally:
            _TIMEOUT.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def replanning() -> Iterator[None]:
        """Within the block (this context), each warmed read (`read_one` / `rows` with `warmed=True`) runs plainly,
        which replans a plan Neo4j deems stale, and then once more as `CYPHER replan=skip`, the text it is sent as
        while a keep-warm runs (`skip_replan`): Neo4j parses that text apart (0.5 s cold) though it runs the same
        plan. The warm-up (`graphmem.ops.warm_up`) runs in it; every warmed read must be among its reads, or a plan
        Neo4j made on a nearly empty database would serve it for as long as a keep-warm runs."""
        token = _REPLANNING.set(True)
        try:
            yield
        finally:
            _REPLANNING.reset(token)

    @staticmethod
    @contextlib.contextmanager
    def rolling_back() -> Iterator[None]:
        """Within the block (this context), every write transaction (`write`, `execute`) runs its work function in
        full and is then rolled back: the call returns what the work returned and nothing is stored. Each
        transaction is rolled back on its own, so the next one does not see what the last one wrote. The warm-up
        (`graphmem.ops.warm_up`) runs a turn so: Neo4j keys a cached plan by the statement, its parameters' types
        and whether the transaction has written yet (measured: a plan made after a write in the transaction was
        planned again, 33-50 ms, in a fresh one), which only the real write path gets right. A thread started
        inside does not inherit it unless it runs in a copy of the context."""
        token = _ROLLING_BACK.set(True)
        try:
            yield
        finally:
            _ROLLING_BACK.reset(token)

    def read(self, work: Callable[[Tx], T]) -> T:
        """Run `work(tx)` in a managed read transaction (retried on transient errors, a deadlock the driver reports
        as a failed result included, and briefly on a lost connection, `_retrying`; running out of transaction
        memory: `Unavailable` at once)."""
        def attempt() -> T:
            with self.driver.session(database=self.database) as s:
                return s.execute_read(_no_memory_retry(work))
        with _unavailable():
            return self._retrying(attempt)

    def write(self, work: Callable[[Tx], T]) -> T:
        """Run `work(tx)` in a managed write transaction (all or nothing; retried as `read` is; rolled back after
        `work` returns inside `rolling_back()`)."""
        undo = _ROLLING_BACK.get()

        def attempt() -> T:
            with self.driver.session(database=self.database) as s:
                return s.execute_write(_no_memory_retry(_undone(work) if undo else work))
        try:
            with _unavailable():
                return self._retrying(attempt)
        except _Undone as done:
            return done.result

    def rows(self, name: str, /, *, warmed: bool = False, **params: Any) -> list[dict[str, Any]]:
        """Run one named read query in its own transaction; `warmed` as for `read_one`."""
        texts = _forms(_checked(name, params), warmed, self.skip_replan)
        return self.read(lambda tx: tx._rows(texts, params))

    def one(self, name: str, /, **params: Any) -> dict[str, Any] | None:
        """Run one named read query; first record or None."""
        return self.read(lambda tx: tx.one(name, **params))

    def read_one(self, name: str, /, *, warmed: bool = False, **params: Any) -> dict[str, Any] | None:
        """One named single-statement read as an auto-commit transaction: RUN and PULL in one round trip, where a
        managed read (`one`) adds BEGIN and COMMIT round trips (measured 3.1 vs 4.1 ms median for the context
        window read on a loaded 2-core machine). Retried once on a transient error or a lost connection (a read has
        nothing to undo), but not when the query ran out of transaction memory. First record as a dict, or None.
        Same tenant guard as every query. A `warmed` read is one the warm-up runs (`graphmem.ops.warm_up`): while
        `skip_replan` is set it runs as `CYPHER replan=skip` (Cypher manual, "Query options"), on the cached plan
        even when Neo4j's statistics say it is stale, so a request never waits for a replan; the plan cache is keyed
        past the options, so the plain query's replans reach it (measured: the option's first call parsed in 0.47 s
        and reused the plan the plain query had made in 3.0 s). Inside `replanning()` it runs in both forms."""
        row = None
        for text in _forms(_checked(name, params), warmed, self.skip_replan):
            row = self._auto_read(text, params)
        return row

    def _auto_read(self, text: str, params: dict[str, Any]) -> dict[str, Any] | None:
        """`read_one`'s auto-commit read of `text`, retried once."""
        with _unavailable():
            for attempt in (0, 1):
                try:
                    with self.driver.session(database=self.database, default_access_mode=neo4j.READ_ACCESS) as s:
                        rec = s.run(_query(text), params).single(strict=False)
                        return dict(rec.items()) if rec else None
                except _UNAVAILABLE as exc:
                    if attempt or getattr(exc, "code", None) in _MEMORY:
                        raise
        return None

    def stream(self, name: str, /, **params: Any) -> Iterator[dict[str, Any]]:
        """One named read as an auto-commit transaction, its records yielded as dicts while the driver fetches them
        (1,000 at a time, the driver's default fetch size), so that a migration walks a large result in one pass
        without holding it: the query runs once, where a cursor re-run per batch re-reads the tenant each time
        (graphmem.store.schema). The session stays open until the iterator is exhausted or closed; other
        transactions may write meanwhile (not to what the query matches on). Not retried: a caller that fails
        midway runs again from the start. Same tenant guard as every query."""
        text = _checked(name, params)
        with _unavailable(), self.driver.session(database=self.database,
                                                 default_access_mode=neo4j.READ_ACCESS) as s:
            for rec in s.run(_query(text), params):
                yield dict(rec.items())

    def execute(self, name: str, /, **params: Any) -> list[dict[str, Any]]:
        """Run one named write query in its own transaction; return its records."""
        return self.write(lambda tx: tx.rows(name, **params))

    @tenacity.retry(retry=tenacity.retry_if_exception_type(neo4j.exceptions.TransientError),
                    stop=tenacity.stop_after_attempt(5), wait=tenacity.wait_exponential(multiplier=0.2, max=3),
                    reraise=True)
    def schema_statement(self, name: str, /, **params: Any) -> None:
        """Run a schema statement (constraints, indexes) in an auto-commit transaction, as Neo4j requires. Another
        process applying the same statement at the same moment (two graphmem processes starting on a fresh
        database) is not an error: Neo4j checks `IF NOT EXISTS` before it takes the schema lock, so the one that
        comes second reports the index the first just made (`EquivalentSchemaRuleAlreadyExists`), which counts as
        made here, and a deadlock between the two (a `TransientError`) is retried, up to 5 attempts in all."""
        try:
            with self.driver.session(database=self.database) as s:
                s.run(cypher.query(name), params).consume()
        except neo4j.exceptions.ClientError as exc:
            if exc.code != "Neo.ClientError.Schema.EquivalentSchemaRuleAlreadyExists":
                raise
