"""A record deleted while a read projects it (a forget committing mid-read: Neo4j reads committed data property by
property, so the map comes back with none or some of its properties) is left out of the answer, never a 422 that
lists the record's fields as if the request had been wrong (helper-found: about 1 search or neighbourhood read in
500-1,000 while facts of the same entities were being forgotten)."""
from __future__ import annotations

from graphmem.models import Entity, Episode, Fact
from graphmem.recall.search import HybridSearch
from graphmem.store import whole
from tests.test_recall_service import build_crm


def _gone(record: dict, kept: tuple[str, ...]) -> dict:
    """`record` as a read that met its deletion returns it: only the `kept` properties still set."""
    return {k: (v if k in kept else None) for k, v in record.items()}


def test_search_leaves_out_records_deleted_while_read(graph, tenant):
    ids = build_crm(graph, tenant)
    facts = graph.facts_about(tenant, ids["Dana Smith"])
    fact, other = (f.model_dump(mode="json") for f in facts[:2])
    episode = graph.get_episode(tenant, ids["episodes"]["e1"]).model_dump(mode="json")
    entity = graph.get_entity(tenant, ids["Globex"]).model_dump(mode="json")
    assert all(whole(r, m) for r, m in ((fact, Fact), (other, Fact), (episode, Episode), (entity, Entity)))

    row = {"facts": [{"fact": _gone(fact, ("id", "tenant_id")), "provenance": []}, {"fact": other, "provenance": []}],
           "episodes": [_gone(episode, ("id", "tenant_id", "kind"))],
           "entities": [_gone(entity, ("id", "tenant_id", "name"))]}
    assert set(HybridSearch._records(row)) == {("fact", other["id"])}
    assert not whole(_gone(fact, ()), Fact) and not whole(None, Entity)
