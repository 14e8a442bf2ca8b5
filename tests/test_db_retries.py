"""A managed transaction whose query hit a deadlock while its records were fetched can end, in neo4j 5.28, in a
`ResultFailedError` raised by the driver's own rollback (it fetches the failed result again), which the driver does
not retry, where it retries the deadlock itself: concurrent retries of one turn answered 500 once in a fresh-clone
CI run. `Database.write` and `read` run such a transaction again. The driver state that leads there cannot be
forced from here, so the work raises the driver's error, caused by a deadlock, on its first try, as the rollback
did; everything else runs on the real Neo4j."""
from __future__ import annotations

import uuid

import neo4j
import pytest


def _failed_result(tx, code: str) -> neo4j.exceptions.ResultFailedError:
    cause = neo4j.exceptions.Neo4jError._hydrate_neo4j(code=code, message="as the server sent it")
    error = neo4j.exceptions.ResultFailedError(tx._tx.run("RETURN 1"), "The result has failed.")
    error.__cause__ = cause
    return error


def _probes(db, marker: str) -> int:
    with db.driver.session(database=db.database) as s:
        return s.run("MATCH (n:RetryProbe {marker: $m}) RETURN count(n) AS n", m=marker).single()["n"]


@pytest.mark.parametrize("how", ["write", "read"])
def test_a_failed_result_caused_by_a_deadlock_runs_the_transaction_again(db, how):
    marker, tries = uuid.uuid4().hex, []

    def work(tx):
        tries.append(1)
        if how == "write":
            tx._tx.run("CREATE (:RetryProbe {marker: $m})", m=marker).consume()
        if len(tries) == 1:
            raise _failed_result(tx, "Neo.TransientError.Transaction.DeadlockDetected")
        return tx._tx.run("RETURN 42 AS x").single()["x"]

    assert getattr(db, how)(work) == 42 and len(tries) == 2
    assert _probes(db, marker) == (1 if how == "write" else 0)    # the first try rolled back, the second committed
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
