"""Reads that build records from unlocked maps (one fact, an entity's facts, episodes by idempotency key, a user's
memories, a session's raw tail) leave out a record a forget deletes while the read projects it, or answer 404 for
a single record, as `tests/test_recall_service.py::test_search_leaves_out_records_deleted_while_read` checks for
search: Neo4j reads committed data property by property, so such a map comes back with some of its properties only,
and building the record raised a validation error (a 422 listing its fields, as if the request had been wrong)."""
from __future__ import annotations

import pytest

from graphmem.errors import NotFound
from graphmem.models import EntityRef, FactIn
from graphmem.store import episodes as episode_store
from graphmem.store import facts as fact_store
from tests.test_context_sessions import say
from tests.test_recall_service import _gone


class _Racing:
    """A real `Database` or `Tx` whose reads return each row's `key` map as a read that met its deletion returns it
    (only id and tenant_id still set); rows without `key` pass unchanged."""

    def __init__(self, inner, key: str):
        self.inner, self.key = inner, key

    def _met_deletion(self, row: dict | None) -> dict | None:
        if row is None or self.key not in row:
            return row
        return {**row, self.key: _gone(row[self.key], ("id", "tenant_id"))}

    def rows(self, name: str, /, **params) -> list[dict]:
        return [self._met_deletion(r) for r in self.inner.rows(name, **params)]

    def one(self, name: str, /, **params) -> dict | None:
        return self._met_deletion(self.inner.one(name, **params))


def test_fact_episode_memory_and_tail_reads_leave_out_records_deleted_while_read(make_context, services, graph, db,
                                                                                 tenant, monkeypatch):
    """The other unlocked reads that build records: one fact (404), an entity's facts, episodes
    by idempotency key, the user's memories and the session tail the context window is built from."""
    ctx = make_context()
    ctx.append_turn(tenant, "s1", say("k1", "u1", "My flamingo parcel never arrived", minute=0))
    (episode,) = graph.session_episodes(tenant, "s1")
    fact = graph.assert_fact(tenant, FactIn(subject=EntityRef(kind="Person", name="Ana"), predicate="OBSERVED",
                                            value="Ana lost a flamingo parcel", episode_id=episode.id))
    ana = graph.get_fact(tenant, fact.fact_id).subject_id
    # as read whole: each read finds the record
    assert db.read(lambda tx: fact_store.get(tx, tenant, fact.fact_id)).id == fact.fact_id
    assert [f.id for f in db.read(lambda tx: fact_store.about(tx, tenant, ana))] == [fact.fact_id]
    key = episode.idempotency_key
    assert set(db.read(lambda tx: episode_store.by_keys(tx, tenant, [key]))) == {key}
    page = services.governance.memories.list(tenant, "u1")
    assert [m.fact.id for m in page.items] == [fact.fact_id] and page.total == 1
    assert [e.id for e in ctx.compactor.raw_tail(tenant, "s1")] == [episode.id]

    # as read while a forget deletes it: absent, never a validation error
    with pytest.raises(NotFound):
        db.read(lambda tx: fact_store.get(_Racing(tx, "fact"), tenant, fact.fact_id))
    assert db.read(lambda tx: fact_store.about(_Racing(tx, "fact"), tenant, ana)) == []
    assert db.read(lambda tx: episode_store.by_keys(_Racing(tx, "episode"), tenant, [key])) == {}
    monkeypatch.setattr(services.governance.memories, "db", _Racing(db, "fact"))
    page = services.governance.memories.list(tenant, "u1")
    assert page.items == [] and page.total == 0        # not counted either
    monkeypatch.setattr(ctx.compactor, "db", _Racing(db, "episode"))
    assert ctx.compactor.raw_tail(tenant, "s1") == []
