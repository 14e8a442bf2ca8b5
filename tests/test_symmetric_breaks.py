"""Found by a helper's break run of symmetric predicates and the misspelt-name hint."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from graphmem.errors import NotFound
from graphmem.governance.service import Governance
from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.service import RecallService

UTC = timezone.utc


def d(y, m=1, day=1):
    return datetime(y, m, day, tzinfo=UTC)


def P(name):
    return EntityRef(kind="Person", name=name)


def ep(graph, tenant, when):
    e, _ = graph.append_episode(tenant, EpisodeIn(content="said", occurred_at=when, session_id="s1", user_id="u1"))
    return e.id


def say(graph, tenant, s, p, o, when, **kw):
    e = ep(graph, tenant, when)
    return graph.assert_fact(tenant, FactIn(subject=s, predicate=p, object=o, valid_from=when, episode_id=e,
                                            **kw)), e


def test_erasure_reopens_a_symmetric_history_fact_only_up_to_the_pair_fact_stored_the_other_way(db, graph, settings,
                                                                                               tenant):
    """"Frank knows Dana" from 2020 was history of "Dana knows Frank" 2022-2023 (which said its end); "Dana knows
    Frank" from 2024 followed. Erasing the 2022 episode re-opened the 2020 fact as current: with the 2024 fact, two
    open facts of one pair (Dana's neighbours listed Frank twice). Stated one way round it ends at 2024."""
    later, _ = say(graph, tenant, P("Dana"), "KNOWS", P("Frank"), d(2024))
    _, erased = say(graph, tenant, P("Dana"), "KNOWS", P("Frank"), d(2022), valid_to=d(2023))
    old, _ = say(graph, tenant, P("Frank"), "KNOWS", P("Dana"), d(2020))
    assert old.action == "history"
    Governance(db, settings, graph).forget(tenant, episode_id=erased)
    dana = graph.get_fact(tenant, later.fact_id).subject_id
    assert [f.id for f in graph.facts_about(tenant, dana, predicates=["KNOWS"], as_of=d(2025))] == [later.fact_id]
    o = graph.get_fact(tenant, old.fact_id)
    assert (o.valid_to, o.status) == (d(2024), "closed")
    assert [f.id for f in graph.fact_history(tenant, later.fact_id)] == [old.fact_id, later.fact_id]


def test_a_misspelt_name_of_many_words_near_many_terms_is_a_404_not_a_500(db, graph, tenant):
    """Each fuzzy term of the hint expands to up to 50 index terms: 40 misspelt words near the tenant's terms went
    past Lucene's 1024 clauses (TooManyClauses, a 500)."""
    words = [f"k{i:02d}q" for i in range(40)]
    near = [v for w in words for c in "abcdefghijlmnoprstuvwxyz" for v in (w[:3] + c, c + w[1:])]
    e = ep(graph, tenant, d(2020))
    graph.assert_facts(tenant, [FactIn(subject=P(" ".join(near[i:i + 10])), predicate="WORKS_AT",
                                       object=EntityRef(kind="Organization", name="Orgx"), episode_id=e)
                                for i in range(0, len(near), 10)])
    with pytest.raises(NotFound, match="closest by text"):
        RecallService(db, graph).resolve_entity(tenant, name=" ".join(words), field="org")


def test_a_null_crm_field_naming_a_symmetric_fact_subject_closes_it_whichever_way_it_is_stored(make_services, tenant,
                                                                                            tmp_path):
    """A mapping "{buddy} KNOWS <contact>": buddy set to null closed the KNOWS facts stored with the contact as
    object, but not "Frank knows Zoe" stored from Frank's end, though Zoe's record said "Zoe knows Frank" (its
    duplicate): whether it closed depended on which record came first."""
    mapping = json.loads((Path(__file__).parents[1] / "graphmem" / "data" / "crm_mapping.json").read_text())
    mapping["objects"]["contact"]["facts"] += [
        {"predicate": "KNOWS", "object": {"kind": "Person", "name": "{friend}"}},
        {"predicate": "KNOWS", "subject": {"kind": "Person", "name": "{buddy}"}, "object": "self"}]
    path = tmp_path / "map.json"
    path.write_text(json.dumps(mapping))
    s = make_services(crm_mapping_path=path)
    records = [{"object": "contact", "id": "c1", "name": "Dana", "friend": "Frank", "changed_at": "2023-01-01"},
               {"object": "contact", "id": "c2", "name": "Frank", "friend": "Zoe", "buddy": "Sam",
                "changed_at": "2023-02-01"},
               {"object": "contact", "id": "c3", "name": "Zoe", "friend": "Frank", "changed_at": "2023-03-01"},
               {"object": "contact", "id": "c2", "name": "Frank", "buddy": None, "changed_at": "2024-01-01"}]
    for i, r in enumerate(records):
        s.ingest.append_episodes(tenant, [EpisodeIn(kind="json", content=json.dumps(r), idempotency_key=f"c-{i}",
                                                    occurred_at=datetime.fromisoformat(r["changed_at"] + "T12:00Z"))])
        Worker(s, tenants=[tenant]).run(until_idle=True)
    frank = next(e for e in s.graph.find_entities(tenant, "Frank") if e.name == "Frank")
    assert s.graph.facts_about(tenant, frank.id, predicates=["KNOWS"], as_of=d(2024, 6)) == []
    assert len(s.graph.facts_about(tenant, frank.id, predicates=["KNOWS"], as_of=d(2023, 6))) == 3


def test_who_at_via_a_symmetric_predicate_reads_either_end_of_the_via_fact(db, graph, tenant):
    """Who at Globex reports to someone who KNOWS someone: "Zed knows Boss" (stored from Zed's end) was not read as
    Boss knowing Zed, so Alice, who reports to Boss, was missing."""
    org = EntityRef(kind="Organization", name="Globex")
    e = ep(graph, tenant, d(2020))
    out = graph.assert_facts(tenant, [
        FactIn(subject=P("Alice"), predicate="WORKS_AT", object=org, episode_id=e, valid_from=d(2020)),
        FactIn(subject=P("Alice"), predicate="REPORTS_TO", object=P("Boss"), episode_id=e, valid_from=d(2020)),
        FactIn(subject=P("Carl"), predicate="WORKS_AT", object=org, episode_id=e, valid_from=d(2020)),
        FactIn(subject=P("Carl"), predicate="REPORTS_TO", object=P("Boss2"), episode_id=e, valid_from=d(2020)),
        FactIn(subject=P("Zed"), predicate="KNOWS", object=P("Boss"), episode_id=e, valid_from=d(2020)),
        FactIn(subject=P("Boss2"), predicate="KNOWS", object=P("Yan"), episode_id=e, valid_from=d(2020))])
    globex = graph.get_fact(tenant, out[0].fact_id).object_id
    members = RecallService(db, graph).who_at(tenant, globex, predicate="REPORTS_TO", via_predicate="KNOWS",
                                              as_of=d(2021))
    assert sorted(m.entity.name for m in members) == ["Alice", "Carl"]
