"""Which calls of a named query Neo4j planned, read from its query collector (`db.stats.collect('QUERIES')`, a
Community procedure): each invocation records its parameters and `elapsedCompileTimeInUs`. A plan found in the
cache costs a few milliseconds of compile time (1-20 ms for a one-line query on a 2-core machine); planning
search/rank costs 1.2-2.5 s, replanning a stale plan 1.2-1.4 s (docs/benchmarks/recall.md, "Cold plans").
Tests compare the two within one run, so they do not depend on how fast the machine is: a window that had to plan
shows a compile time near the cold plan's, one that used a cached plan a small fraction of it. The collector keeps
up to 100 invocations per query, so a collection should span a few seconds of traffic, not minutes."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import cypher
from graphmem.store.db import SKIP_REPLAN


class QueryStats:
    """A running collection of the server's queries (`collecting()`); `compile_s` reads it so far."""

    def __init__(self, db):
        self._db = db

    def restart(self) -> None:
        """Forget what was collected and collect again from now."""
        self._run("CALL db.stats.stop('QUERIES')")
        self._run("CALL db.stats.clear('QUERIES')")
        self._run("CALL db.stats.collect('QUERIES')")

    def _run(self, statement: str) -> list[dict]:
        with self._db.driver.session(database=self._db.database) as s:
            return s.run(statement).data()

    def compile_s(self, name: str, tenant_id: str) -> list[float]:
        """Compile times (seconds) of the calls of cypher/`name` made for `tenant_id`, oldest first, whether sent
        plainly or as `CYPHER replan=skip` (which the collector lists apart)."""
        return self.compiles(tenant_id).get(name, [])

    def compiles(self, tenant_id: str) -> dict[str, list[float]]:
        """{cypher/ name: compile times (seconds), oldest first} of every named query called for `tenant_id`."""
        names = {text[:10_000]: name for name in cypher.names()   # as the collector keeps them
                 for text in (cypher.query(name), SKIP_REPLAN + cypher.query(name))}
        calls: dict[str, list[dict]] = {}
        for row in self._run("CALL db.stats.retrieve('QUERIES')"):
            if (name := names.get(row["data"]["query"])) is not None:
                calls.setdefault(name, []).extend(call for call in row["data"]["invocations"]
                                                  if call.get("params", {}).get("tenant_id") == tenant_id)
        return {name: [c["elapsedCompileTimeInUs"] / 1e6
                       for c in sorted(found, key=lambda c: c["startTimestampMillis"])]
                for name, found in calls.items() if found}


@contextmanager
def collecting(db) -> Iterator[QueryStats]:
    """Collect every query the server runs from now until the block ends (cleared before and after)."""
    stats = QueryStats(db)
    stats.restart()
    try:
        yield stats
    finally:
        stats._run("CALL db.stats.stop('QUERIES')")
        stats._run("CALL db.stats.clear('QUERIES')")
