"""Graph proximity from a seed takes every fact one entity further before the filters choose (found by a helper's
hands-on test over HTTP): it kept `fetch` of them (100 by default) in no particular order, so a filtered search from
a hub missed the one fact the filters ask for among more."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.models import SearchRequest
from graphmem.recall.service import RecallService

UTC = timezone.utc


@pytest.fixture(scope="module")
def recall(db, graph):
    return RecallService(db, graph, embedder=None)


def test_a_filtered_search_from_a_hub_finds_a_fact_one_entity_further_among_many(recall, graph, tenant):
    """Megacorp employs 301 people; one of them has a title (written between the first 150 and the last 150, who
    each know a friend). A search seeded at Megacorp for HAS_TITLE facts finds that title by proximity (0.5: one
    entity further), whatever the query's words."""
    t = datetime(2023, 1, 1, tzinfo=UTC)

    def emp(i):
        return [FactIn(subject=EntityRef(kind="Person", name=f"Emp {i}"), predicate="WORKS_AT",
                       object=EntityRef(kind="Organization", name="Megacorp"), valid_from=t),
                FactIn(subject=EntityRef(kind="Person", name=f"Emp {i}"), predicate="KNOWS",
                       object=EntityRef(kind="Person", name=f"Friend {i}"), valid_from=t)]

    def batch(facts):
        ep = graph.append_episode(tenant, EpisodeIn(content="staff list", occurred_at=t))[0].id
        graph.assert_facts(tenant, [f.model_copy(update={"episode_id": ep}) for f in facts])

    batch([f for i in range(150) for f in emp(i)])
    batch([FactIn(subject=EntityRef(kind="Person", name="Target Person"), predicate="WORKS_AT",
                  object=EntityRef(kind="Organization", name="Megacorp"), valid_from=t),
           FactIn(subject=EntityRef(kind="Person", name="Target Person"), predicate="HAS_TITLE",
                  value="Chief Widget Officer", valid_from=t)])
    batch([f for i in range(150, 300) for f in emp(i)])
    hub = graph.find_entities(tenant, "Megacorp")[0].id
    res = recall.search(tenant, SearchRequest(query="zzzz", targets=["fact"], predicates=["HAS_TITLE"],
                                              seed_entity_ids=[hub], k=5))
    assert [h.text for h in res.hits] == ["Target Person has the title Chief Widget Officer"]
    assert res.hits[0].reasons == ["graph rank 1 (score 0.5)"]
