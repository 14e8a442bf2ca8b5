"""A managed transaction whose query hit a deadlock while its records were fetched can end, in neo4j 5.28, in a
`ResultFailedError` raised by the driver's own rollback (it fetches the failed result again), which the driver does
not retry, where it retries the deadlock itself: concurrent retries of one turn answered 500 once in a fresh-clone
CI run. `Database.write` and `read` run such a transaction again, as they do a deadlock the server reports. The driver state that leads there cannot be
forced from here, so the work raises the driver's error, caused by a deadlock, on its first try, as the rollback
did; everything else runs on the real Neo4j."""
from __future__ import annotations

import socket
import time
import uuid

import neo4j
import pytest

from graphmem.errors import Conflict, Unavailable
from graphmem.store import Database
from graphmem.store.db import GONE_TRIES


def _failed_result(tx, code: str) -> neo4j.exceptions.ResultFailedError:
    cause = neo4j.exceptions.Neo4jError._hydrate_neo4j(code=code, message="as the server sent it")
    error = neo4j.exceptions.ResultFailedError(tx._tx.run("RETURN 1"), "The result has failed.")
    error.__cause__ = cause
    return error


def _probes(db, marker: str) -> int:
    with db.driver.session(database=db.database) as s:
        return s.run("MATCH (n:RetryProbe {marker: $m}) RETURN count(n) AS n", m=marker).single()["n"]


@pytest.mark.parametrize("error", ["failed result", "deadlock"])
@pytest.mark.parametrize("how", ["write", "read"])
def test_a_failed_result_caused_by_a_deadlock_runs_the_transaction_again(db, how, error):
    marker, tries = uuid.uuid4().hex, []
    deadlock = "Neo.TransientError.Transaction.DeadlockDetected"

    def work(tx):
        tries.append(1)
        if how == "write":
            tx._tx.run("CREATE (:RetryProbe {marker: $m})", m=marker).consume()
        if len(tries) == 1:
            if error == "deadlock":   # as the server reports it
                raise neo4j.exceptions.Neo4jError._hydrate_neo4j(code=deadlock, message="as the server sent it")
            raise _failed_result(tx, deadlock)
        return tx._tx.run("RETURN 42 AS x").single()["x"]

    assert getattr(db, how)(work) == 42 and len(tries) == 2
    assert _probes(db, marker) == (1 if how == "write" else 0)    # the first try rolled back, the second committed
    with db.driver.session(database=db.database) as s:
        s.run("MATCH (n:RetryProbe {marker: $m}) DELETE n", m=marker).consume()


@pytest.mark.parametrize("error", ["server", "failed result"])
def test_an_entity_deleted_under_a_write_runs_it_again_then_answers_conflict(db, error):
    """A write whose matched entity a concurrent forget deleted before the write linked to it fails with
    `Neo.ClientError.Statement.EntityNotFound` ("Unable to load NODE ..."), which the driver does not retry: it
    answered 500 (tests/test_forget_concurrent_writes.py races it for real). The whole transaction runs again; one
    that keeps failing so ends, after `GONE_TRIES` tries and with nothing written, as a 409 `Conflict`."""
    code, marker, tries = "Neo.ClientError.Statement.EntityNotFound", uuid.uuid4().hex, []

    def work(fail_until):
        def run(tx):
            tries.append(1)
            tx._tx.run("CREATE (:RetryProbe {marker: $m})", m=marker).consume()
            if len(tries) <= fail_until:
                if error == "server":
                    raise neo4j.exceptions.Neo4jError._hydrate_neo4j(code=code, message="Unable to load NODE 4:x:1.")
                raise _failed_result(tx, code)
            return 42
        return run

    assert db.write(work(1)) == 42 and len(tries) == 2 and _probes(db, marker) == 1
    tries.clear()
    with pytest.raises(Conflict) as info:
        db.write(work(GONE_TRIES + 10))
    assert len(tries) == GONE_TRIES and _probes(db, marker) == 1 and "concurrent" in info.value.detail
    with db.driver.session(database=db.database) as s:
        s.run("MATCH (n:RetryProbe {marker: $m}) DELETE n", m=marker).consume()


@pytest.mark.parametrize("code", ["Neo.ClientError.Statement.SyntaxError",
                                  "Neo.TransientError.General.MemoryPoolOutOfMemoryError"])
def test_a_failed_result_of_any_other_cause_is_raised_at_once(db, code):
    tries = []

    def work(tx):
        tries.append(1)
        raise _failed_result(tx, code)

    with pytest.raises(neo4j.exceptions.ResultFailedError):
        db.write(work)
    assert len(tries) == 1


def test_a_server_that_cannot_be_reached_answers_unavailable_soon_naming_why():
    """Helpers found the API hanging while Neo4j was down: the driver's own retry loop ran a managed read for 268 s
    before giving up, and the 503 said only "50N42: Unexpected error has occurred". Now a lost or refused connection
    is tried again for `unavailable_retry_s` (here 1 s) and the error names the connection failure."""
    with socket.socket() as s:          # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    db = Database(f"bolt://127.0.0.1:{port}", ("neo4j", "unused"), unavailable_retry_s=1.0)
    try:
        for call in (lambda: db.rows("meta/get_schema"), lambda: db.execute("meta/dedupe_schema_record")):
            started = time.monotonic()
            with pytest.raises(Unavailable) as info:
                call()
            assert time.monotonic() - started < 30      # not the minutes the driver's loop took
            assert f"127.0.0.1:{port}" in info.value.detail and "50N42" not in info.value.detail, info.value.detail
    finally:
        db.close()
