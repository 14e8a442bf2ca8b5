"""Recall around a hub: an organisation of 2,000 people (each also knowing one colleague), and someone who knows
3,000 people. Paths around the hub or one of its people, a search seeded from it at the largest limits the API
allows, and paths between two entities through a hub answer within Neo4j's transaction memory (the test Neo4j:
heap 1g, so a 716 MiB limit per transaction)."""
from __future__ import annotations

import uuid
from datetime import datetime, timezone

import pytest

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.models import SearchRequest
from graphmem.recall.service import RecallService

PEOPLE = 2000
T0 = datetime(2020, 1, 1, tzinfo=timezone.utc)


def _knows(i: int) -> int:
    return (7 * i + 3) % PEOPLE


@pytest.fixture(scope="module")
def hub(graph):
    """A tenant with Acme Corp and its PEOPLE employees; returns (tenant, recall, {name: id})."""
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="the staff list", occurred_at=T0))
    acme = EntityRef(kind="Organization", name="Acme Corp")
    facts = [FactIn(subject=EntityRef(kind="Person", name=f"Emp {i}"), predicate="WORKS_AT", object=acme,
                    episode_id=ep.id, valid_from=T0) for i in range(PEOPLE)]
    facts += [FactIn(subject=EntityRef(kind="Person", name=f"Emp {i}"), predicate="KNOWS",
                     object=EntityRef(kind="Person", name=f"Emp {_knows(i)}"), episode_id=ep.id, valid_from=T0)
              for i in range(PEOPLE) if _knows(i) != i]
    assert {o.action for o in graph.assert_facts(tenant, facts)} == {"created"}
    ids = {n: graph.find_entities(tenant, n)[0].id for n in ("Acme Corp", "Emp 5")}
    return tenant, RecallService(graph.db, graph, embedder=None), ids


def test_paths_around_a_hub_at_the_largest_limit(hub):
    """Helper-found: around an organisation of 2,000 people, `POST /v1/recall` with `limit` 500 (or 1-hop, or around
    one of its people) was a 503 ("needed more memory than Neo4j allows a transaction"): the final top-`limit` sort
    held every level's list once per kept row (723 MB). Now the answer: 500 paths, the shortest first."""
    tenant, recall, ids = hub
    direct = recall.paths_around(tenant, ids["Acme Corp"], max_hops=1, limit=500)
    assert len(direct) == 500 and {p.length for p in direct} == {1}
    assert len({p.target.id for p in direct}) == 500 and {p.target.kind for p in direct} == {"Person"}
    assert all(p.hops[0].fact.predicate == "WORKS_AT" and p.hops[0].direction == "in" for p in direct)

    around = recall.paths_around(tenant, ids["Emp 5"], limit=500)    # 3 hops: the firm, then its people
    assert len(around) == 500
    assert [p.length for p in around] == sorted(p.length for p in around)
    first = {p.target.name for p in around if p.length == 1}
    assert first >= {"Acme Corp", f"Emp {_knows(5)}"}
    assert all(p.target.id != ids["Emp 5"] for p in around)
    assert all(p.hops[-1].to_id == p.target.id and p.hops[0].from_id == ids["Emp 5"] for p in around)


def test_search_seeded_from_a_hub_at_k_100(hub):
    """Helper-found: a search seeded from the organisation with `k` 100 was a 503: the prefetch's sorted LIMIT
    carried the retrievers' lists in each kept row (333 MB at k = 50, over the limit at 100). Now 100 hits, the
    facts touching the seed among them, found by graph proximity."""
    tenant, recall, ids = hub
    hits = recall.search(tenant, SearchRequest(query="Emp", k=100, seed_entity_ids=[ids["Acme Corp"]])).hits
    assert len(hits) == 100 and len({(h.kind, h.id) for h in hits}) == 100
    near = [h for h in hits if h.kind == "fact" and any(r.startswith("graph rank") for r in h.reasons)]
    assert near and all(h.fact.predicate in ("WORKS_AT", "KNOWS") for h in near)
    assert any(h.fact.object_id == ids["Acme Corp"] for h in near)


FAN = 3000


@pytest.fixture(scope="module")
def fan(graph):
    """Alpha Seller knows FAN people, each working at Bigorg and knowing a friend of their own; FAN others work at
    Bigorg too, Quinn 0 among them (3 hops from Alpha); Lonely Target is connected to none of them. Returns
    (tenant, recall, {name: id})."""
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="the address book", occurred_at=T0))
    big = EntityRef(kind="Organization", name="Bigorg")
    facts = [FactIn(subject=EntityRef(kind="Person", name="Alpha Seller"), predicate="KNOWS",
                    object=EntityRef(kind="Person", name=f"Pal {i}"), episode_id=ep.id, valid_from=T0)
             for i in range(FAN)]
    facts += [FactIn(subject=EntityRef(kind="Person", name=f"Pal {i}"), predicate="WORKS_AT", object=big,
                     episode_id=ep.id, valid_from=T0) for i in range(FAN)]
    facts += [FactIn(subject=EntityRef(kind="Person", name=f"Pal {i}"), predicate="KNOWS",
                     object=EntityRef(kind="Person", name=f"Friend {i}"), episode_id=ep.id, valid_from=T0)
              for i in range(FAN)]
    facts += [FactIn(subject=EntityRef(kind="Person", name=f"Quinn {i}"), predicate="WORKS_AT", object=big,
                     episode_id=ep.id, valid_from=T0) for i in range(FAN)]
    facts += [FactIn(subject=EntityRef(kind="Person", name="Lonely Target"), predicate="KNOWS",
                     object=EntityRef(kind="Person", name="Nobody Else"), episode_id=ep.id, valid_from=T0)]
    assert {o.action for o in graph.assert_facts(tenant, facts)} == {"created"}
    ids = {n: graph.find_entities(tenant, n)[0].id for n in ("Alpha Seller", "Quinn 0", "Lonely Target", "Bigorg")}
    return tenant, RecallService(graph.db, graph, embedder=None), ids


def test_paths_between_through_a_hub(fan):
    """Helper-found: between someone who knows 3,000 people and anyone 3 or more hops away (an introduction at its
    default 4 hops, or two entities not connected at all), `POST /v1/recall` with `other`, `GET
    /v1/recall/introductions` and `GET /v1/entities/{id}/paths/{other}` were a 503: the first walk grouped each level's
    entities by the list of every entity seen before (memory: level x seen). Now the shortest paths, or none."""
    tenant, recall, ids = fan
    alpha = ids["Alpha Seller"]
    intro = recall.introduction(tenant, alpha, ids["Quinn 0"])
    assert intro.length == 3 and [h.to_name for h in intro.hops][1:] == ["Bigorg", "Quinn 0"]
    assert intro.hops[0].to_name.startswith("Pal ")
    paths = recall.paths_between(tenant, alpha, ids["Quinn 0"], max_hops=4, k=5)
    assert len(paths) == 5 and {p.length for p in paths} == {3}
    assert len({p.hops[0].to_id for p in paths}) == 5                     # through five different people
    assert recall.paths_between(tenant, alpha, ids["Lonely Target"], max_hops=4) == []
    assert {p.length for p in recall.paths_between(tenant, alpha, ids["Bigorg"], max_hops=4)} == {2}
