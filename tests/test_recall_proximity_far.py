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


def test_a_seeds_own_facts_rank_above_facts_one_entity_further_however_many_paths_lead_there(recall, graph, tenant):
    """Found by a helper over HTTP: the 0.5 for a fact one entity further was added once per seed fact leading to
    its entity, so with three facts from Ann to Ben, Ben's job (1.5) outranked Ann's own title (1.0), and Ann's facts
    to Ben scored 2.5. Now: 1.0 for a fact touching the seed, else 0.5 once. Episodes the same way: one that mentions
    the seed 1.0, else 0.5 as provenance of the seed's facts."""
    t = datetime(2023, 1, 1, tzinfo=UTC)
    ann, ben = EntityRef(kind="Person", name="Ann Seed"), EntityRef(kind="Person", name="Ben Hub")
    ep = graph.append_episode(tenant, EpisodeIn(content="org chart", occurred_at=t))[0].id
    graph.assert_facts(tenant, [FactIn(subject=s, predicate=p, episode_id=ep, valid_from=t, **o) for s, p, o in (
        (ann, "WORKS_AT", {"object": EntityRef(kind="Organization", name="Seedco")}),
        (ann, "HAS_TITLE", {"value": "Director"}),
        (ann, "KNOWS", {"object": ben}), (ann, "REPORTS_TO", {"object": ben}), (ann, "INTRODUCED_BY", {"object": ben}),
        (ben, "HAS_TITLE", {"value": "Janitor"}),
        (ben, "WORKS_AT", {"object": EntityRef(kind="Organization", name="Otherco")}))])
    seed = graph.find_entities(tenant, "Ann Seed")[0].id
    res = recall.search(tenant, SearchRequest(query="zzzz", targets=["fact"], seed_entity_ids=[seed], k=10))
    scores = {h.text: h.reasons for h in res.hits}
    own = [h.text for h in res.hits if h.text.startswith("Ann Seed")]
    assert len(own) == 5 and [h.text for h in res.hits][:5] == own, scores        # every one of Ann's first
    assert [h.reasons for h in res.hits[:5]] == [[f"graph rank {i} (score 1)"] for i in range(1, 6)], scores
    assert sorted(h.text for h in res.hits[5:]) == ["Ben Hub has the title Janitor", "Ben Hub works at Otherco"]
    assert all(h.reasons[0].endswith("(score 0.5)") for h in res.hits[5:]), scores
