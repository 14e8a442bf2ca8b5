"""Entities looked up by name page without repeats or gaps at any page size, also when more entities than one
full-text read holds (1,000) score alike. Helper-found: 1,200 people named "Pager Person N", paged by 37, repeated
30 and never listed "Person 1000" to "Person 1029": a shallow page read the index's best 1,000 and sorted those by
name, a deep page read them all; a page holding the lowest score read is now read again deeper."""
from __future__ import annotations

from datetime import datetime, timezone

from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.service import RecallService


def test_names_that_score_alike_page_in_one_order(db, graph, tenant):
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="the staff list", occurred_at=datetime(2024, 1, 1,
                                                                                                  tzinfo=timezone.utc)))
    acme = EntityRef(kind="Organization", name="Acme")
    outs = graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=f"Pager Person {i}"),
                                              predicate="WORKS_AT", object=acme, episode_id=ep.id)
                                       for i in range(1200)])
    assert {o.action for o in outs} == {"created"}
    recall = RecallService(db, graph, embedder=None)
    whole = [e.name for e in recall.find_entities(tenant, "pager", limit=2000)]
    assert len(whole) == len(set(whole)) == 1200 and whole == sorted(whole)      # equal scores: by name
    for size in (37, 50):
        pages = [recall.find_entities(tenant, "pager", offset=o, limit=size) for o in range(0, 3 * size, size)]
        assert [e.name for p in pages for e in p] == whole[:3 * size], size
    assert whole[:3] == ["Pager Person 0", "Pager Person 1", "Pager Person 10"]
    assert "Pager Person 1000" in [e.name for e in recall.find_entities(tenant, "pager", limit=37)]


def test_a_kind_finds_its_few_behind_many_alike_of_another_kind(db, graph, tenant):
    """Helper-found: 1,500 organisations named "Pager Person N" came before 40 people named alike; with kind Person
    a page of 50 read the best 1,000 hits, all organisations, and answered nothing (a page of 500 read 10,000 and
    found all 40). A read whose hits the kind filter leaves short of the page is read again deeper."""
    ep, _ = graph.append_episode(tenant, EpisodeIn(content="the register", occurred_at=datetime(2024, 1, 1,
                                                                                                 tzinfo=timezone.utc)))
    orgs = [FactIn(subject=EntityRef(kind="Organization", name=f"Pager Person {i:04d}"), predicate="LOCATED_IN",
                   value="Berlin", episode_id=ep.id) for i in range(1500)]
    people = [FactIn(subject=EntityRef(kind="Person", name=f"Pager Person {5000 + i}"), predicate="HAS_TITLE",
                     value="Clerk", episode_id=ep.id) for i in range(40)]
    graph.assert_facts(tenant, orgs)
    graph.assert_facts(tenant, people)       # written later: Lucene keeps equal scores in the order written
    recall = RecallService(db, graph, embedder=None)
    want = [f"Pager Person {5000 + i}" for i in range(40)]
    for size in (10, 37, 50, 500):
        got = []
        for offset in range(0, 50, size):
            got += [e.name for e in recall.find_entities(tenant, "Pager Person", kind="Person", offset=offset,
                                                         limit=size)]
        assert got == want, size
