"""A value said again from a later start (a `duplicate`: provenance only) is not lost when another value arriving
late cuts the stored fact before that start: the restatement holds from its own start again. The timeline then
does not depend on the order the statements arrived in."""
from __future__ import annotations

from datetime import datetime, timezone
from itertools import permutations

import pytest

from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.test_governance_support import fact_node, gov  # noqa: F401

UTC = timezone.utc


def d(y, m=1, day=1):
    return datetime(y, m, day, tzinfo=UTC)


DANA = EntityRef(kind="Person", name="Dana Scully")


def title(graph, tenant, value, when, **kw):
    e, _ = graph.append_episode(tenant, EpisodeIn(content=f"title {value} since {when:%Y-%m}", occurred_at=when))
    return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value=value, valid_from=when,
                                            episode_id=e.id, **kw))


def works_at(graph, tenant, org, when):
    e, _ = graph.append_episode(tenant, EpisodeIn(content=f"works at {org} since {when:%Y-%m}", occurred_at=when))
    return graph.assert_fact(tenant, FactIn(subject=DANA, predicate="WORKS_AT", valid_from=when, episode_id=e.id,
                                            object=EntityRef(kind="Organization", name=org)))


def timeline(graph, tenant):
    dana = graph.find_entities(tenant, "Dana Scully", "Person")[0].id
    return [(f.value or graph.get_entity(tenant, f.object_id).name, f.valid_from, f.valid_to, f.status)
            for f in graph.facts_about(tenant, dana, include_superseded=True)]


def test_a_restatement_outlives_a_late_value_that_cuts_its_fact(graph, tenant):
    title(graph, tenant, "VP", d(2024, 4))
    assert title(graph, tenant, "VP", d(2024, 9)).action == "duplicate"     # said again: still VP in September
    title(graph, tenant, "CTO", d(2024, 7))                                 # learned late: CTO from July
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "closed"),
        ("CTO", d(2024, 7), d(2024, 9), "closed"),
        ("VP", d(2024, 9), None, "current"),
    ]


def test_a_restatement_inside_a_late_history_value(graph, tenant):
    works_at(graph, tenant, "Acme", d(2020))
    works_at(graph, tenant, "Acme", d(2023))       # duplicate: Acme still in 2023
    works_at(graph, tenant, "Globex", d(2024))     # supersedes Acme in 2024
    works_at(graph, tenant, "Initech", d(2021))    # learned late: Initech from 2021 (history, inside Acme's fact)
    assert timeline(graph, tenant) == [
        ("Acme", d(2020), d(2021), "closed"),
        ("Initech", d(2021), d(2023), "closed"),
        ("Acme", d(2023), d(2024), "closed"),
        ("Globex", d(2024), None, "current"),
    ]


def test_every_restatement_after_the_cut_is_kept_and_one_before_it_stays_a_confirmation(graph, tenant):
    first = title(graph, tenant, "VP", d(2024, 1))
    for month in (3, 8, 10):
        title(graph, tenant, "VP", d(2024, month))
    title(graph, tenant, "CTO", d(2024, 5))
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 1), d(2024, 5), "closed"),
        ("CTO", d(2024, 5), d(2024, 8), "closed"),
        ("VP", d(2024, 8), None, "current"),
    ]
    later = [f for f in graph.fact_history(tenant, first.fact_id) if f.valid_from == d(2024, 8)][0]
    assert [p.occurred_at for p in graph.fact_provenance(tenant, later.id)] == [d(2024, 8), d(2024, 10)]
    # and it goes on: a second late value cuts the new fact again
    title(graph, tenant, "COO", d(2024, 9))
    assert timeline(graph, tenant)[2:] == [
        ("VP", d(2024, 8), d(2024, 9), "closed"),
        ("COO", d(2024, 9), d(2024, 10), "closed"),
        ("VP", d(2024, 10), None, "current"),
    ]


def test_a_stated_end_also_keeps_a_later_restatement(graph, tenant):
    title(graph, tenant, "VP", d(2024, 1))
    title(graph, tenant, "VP", d(2024, 9))
    out = title(graph, tenant, "VP", d(2024, 2), valid_to=d(2024, 6))     # "VP from February until June"
    assert out.action == "duplicate"
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 1), d(2024, 6), "closed"),
        ("VP", d(2024, 9), None, "current"),
    ]


def test_an_erased_restatement_leaves_no_trace_and_is_not_asserted_again(gov, graph, db, tenant):
    first = title(graph, tenant, "VP", d(2024, 4))
    again = graph.append_episode(tenant, EpisodeIn(content="still VP", occurred_at=d(2024, 9)))[0]
    graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value="VP", valid_from=d(2024, 9),
                                     episode_id=again.id))
    assert gov.forget(tenant, episode_id=again.id).counts["facts_kept"] == 1
    assert again.id not in str(fact_node(db, first.fact_id))
    title(graph, tenant, "CTO", d(2024, 7))
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "closed"),
        ("CTO", d(2024, 7), None, "current"),
    ]


# ---- every arrival order of three episodes gives one timeline ------------------------------------------------------
SCENARIOS = {
    # a restatement that gives an end, and a value learned late that cuts the fact it restates
    "restatement with an end, late value": (
        "HAS_TITLE", [("VP", d(2024, 4), None), ("VP", d(2024, 9), d(2024, 12)), ("CTO", d(2024, 7), None)],
        {d(2024, 3): [], d(2024, 5): ["VP"], d(2024, 8): ["CTO"], d(2024, 10): ["VP"], d(2025): []}),
    # ... and a value learned late that starts inside that restatement
    "restatement with an end, late value inside it": (
        "HAS_TITLE", [("VP", d(2024, 1), None), ("VP", d(2024, 9), d(2024, 12)), ("CTO", d(2024, 10), None)],
        {d(2024, 5): ["VP"], d(2024, 9, 15): ["VP"], d(2024, 11): ["CTO"], d(2025): ["CTO"]}),
    # a restatement, and a value learned late that gives its own end
    "restatement, late value with an end": (
        "HAS_TITLE", [("VP", d(2024, 4), None), ("VP", d(2024, 9), None), ("CTO", d(2024, 7), d(2024, 8))],
        {d(2024, 3): [], d(2024, 5): ["VP"], d(2024, 7, 15): ["CTO"], d(2024, 8, 15): [], d(2024, 10): ["VP"]}),
    # a restatement, and an end stated by a statement of the value from an earlier start ("VP from February until
    # June" ends the VP "since April" says, as it would as a duplicate)
    "restatement, end stated from an earlier start": (
        "HAS_TITLE", [("VP", d(2024, 4), None), ("VP", d(2024, 9), None), ("VP", d(2024, 2), d(2024, 6))],
        {d(2024, 1): [], d(2024, 3): ["VP"], d(2024, 5): ["VP"], d(2024, 8): [], d(2024, 10): ["VP"]}),
    # an end stated, or a value learned late, exactly where a restatement starts: the value holds again from there
    "restatement where a later-stated end cuts": (
        "HAS_TITLE", [("CTO", d(2024, 4), d(2024, 8)), ("CTO", d(2024, 7), None), ("CTO", d(2024, 8), None)],
        {d(2024, 3): [], d(2024, 5): ["CTO"], d(2024, 8): ["CTO"], d(2024, 9): ["CTO"], d(2025): ["CTO"]}),
    "restatement where a duplicate's end cuts": (
        "HAS_TITLE", [("VP", d(2024, 1), None), ("VP", d(2024, 11), d(2025, 4)), ("VP", d(2024, 9), d(2024, 11))],
        {d(2024, 2): ["VP"], d(2024, 10): ["VP"], d(2024, 11): ["VP"], d(2025, 3): ["VP"], d(2025, 5): []}),
    # an end stated past the end of a fact of the value that runs into a later one (closed where it begins):
    # the end falls in that later fact, which it ends, as it does when the facts were stored the other way
    "an end past a run of facts of the value, said again": (
        "HAS_TITLE", [("VP", d(2024, 4), d(2024, 10)), ("VP", d(2024, 8), None), ("VP", d(2024, 2), None)],
        {d(2024, 1): [], d(2024, 3): ["VP"], d(2024, 9): ["VP"], d(2024, 11): [], d(2025): []}),
    "an end past a run of facts of the value, from an earlier start": (
        "HAS_TITLE", [("VP", d(2024, 2), d(2024, 8)), ("VP", d(2024, 3), None), ("VP", d(2024, 4), None)],
        {d(2024, 1): [], d(2024, 3): ["VP"], d(2024, 5): ["VP"], d(2024, 9): [], d(2025): []}),
    # ... also when a value from elsewhere comes in between: the end of "CTO from August until February" ends the
    # CTO "since October" after VP from September
    "an end past a value in between": (
        "HAS_TITLE", [("VP", d(2024, 9), None), ("CTO", d(2024, 10), None), ("CTO", d(2024, 8), d(2025, 2))],
        {d(2024, 8, 15): ["CTO"], d(2024, 9, 15): ["VP"], d(2024, 10, 15): ["CTO"], d(2025, 1, 15): ["CTO"],
         d(2025, 3): []}),
    # a value said from inside the interval a statement of it gave, after that fact was cut, ends where it said
    "a start inside the interval of a cut statement": (
        "HAS_TITLE", [("VP", d(2024, 9), d(2025, 1)), ("VP", d(2024, 4), d(2024, 10)), ("VP", d(2024, 10), None)],
        {d(2024, 3): [], d(2024, 5): ["VP"], d(2024, 11): ["VP"], d(2025, 2): [], d(2026): []}),
    # the same for a multi-valued predicate: "golf from 2020 until 2022" ends the golf "since 2021" says
    "multi-valued, end stated from an earlier start": (
        "INTERESTED_IN", [("golf", d(2021), None), ("golf", d(2020), d(2022)), ("tennis", d(2021, 6), None)],
        {d(2019): [], d(2020, 6): ["golf"], d(2021, 3): ["golf"], d(2021, 9): ["golf", "tennis"],
         d(2023): ["tennis"]}),
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_order_of_a_late_value_a_stated_end_and_a_restatement_gives_one_timeline(graph, tenant, scenario):
    """The three statements of a scenario, each its own episode, sent in each of the 6 orders (one person per
    order): the values read at each date are the same whatever the order."""
    predicate, said, expected = SCENARIOS[scenario]
    got = {}
    for n, order in enumerate(permutations(range(len(said)))):
        who = EntityRef(kind="Person", name=f"Fox Mulder {n}")
        for i in order:
            value, start, end = said[i]
            e, _ = graph.append_episode(tenant, EpisodeIn(content=f"{value} from {start:%Y-%m}", occurred_at=start))
            graph.assert_fact(tenant, FactIn(subject=who, predicate=predicate, value=value, valid_from=start,
                                             valid_to=end, episode_id=e.id))
        [fox] = graph.find_entities(tenant, who.name, "Person")
        got[order] = {at: sorted(f.value for f in graph.facts_about(tenant, fox.id, as_of=at,
                                                                    predicates=[predicate]))
                      for at in expected}
    assert {o: g for o, g in got.items() if g != expected} == {}


def test_erasing_one_restatement_keeps_the_end_of_another(gov, graph, tenant):
    """The ends of the restatements are kept index by index with the rest: after one of two is erased, the other
    still holds from its start up to its own end when the fact is cut."""
    title(graph, tenant, "VP", d(2024, 1))
    gone = graph.append_episode(tenant, EpisodeIn(content="VP since March", occurred_at=d(2024, 3)))[0]
    graph.assert_fact(tenant, FactIn(subject=DANA, predicate="HAS_TITLE", value="VP", valid_from=d(2024, 3),
                                     episode_id=gone.id))
    title(graph, tenant, "VP", d(2024, 9), valid_to=d(2024, 12))
    gov.forget(tenant, episode_id=gone.id)
    title(graph, tenant, "CTO", d(2024, 6))
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 1), d(2024, 6), "closed"),
        ("CTO", d(2024, 6), d(2024, 9), "closed"),
        ("VP", d(2024, 9), d(2024, 12), "closed"),
    ]
