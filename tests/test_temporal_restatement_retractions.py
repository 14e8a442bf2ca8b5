"""A value said again from a later start (a `duplicate`, kept as a restatement of the stored fact) is not lost when a
retraction arriving late ("no longer VP since July") ends the stored fact before that start: the value holds again
from the restatement's own start, asserted by its episode, as for a late value that cuts the fact
(tests/test_temporal_restatements.py). The timeline then does not depend on the order the episodes arrived in."""
from __future__ import annotations

import json
from datetime import datetime, timezone
from itertools import permutations

from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.test_governance_support import fact_node, gov  # noqa: F401

UTC = timezone.utc


def d(y, m=1, day=1):
    return datetime(y, m, day, tzinfo=UTC)


ANN = EntityRef(kind="Person", name="Ann Perkins")


def title(graph, tenant, value, when):
    """Episode "Ann is <value> since <when>" and its fact; returns (episode id, outcome)."""
    e, _ = graph.append_episode(tenant, EpisodeIn(content=f"Ann is {value} since {when:%Y-%m-%d}", occurred_at=when))
    return e.id, graph.assert_fact(tenant, FactIn(subject=ANN, predicate="HAS_TITLE", value=value, valid_from=when,
                                                  episode_id=e.id))


def stop(graph, tenant, when, **kw):
    """Episode "Ann stopped being VP on <when>" and its retraction at `when`; returns (episode id, closed ids)."""
    e, _ = graph.append_episode(tenant, EpisodeIn(content=f"Ann stopped being VP on {when:%Y-%m-%d}",
                                                  occurred_at=when))
    return e.id, graph.retract(tenant, ann_id(graph, tenant), "HAS_TITLE", e.id, at=when, **kw)


def ann_id(graph, tenant):
    return graph.find_entities(tenant, "Ann Perkins", "Person")[0].id


def timeline(graph, tenant):
    return [(f.value, f.valid_from, f.valid_to, f.status)
            for f in graph.facts_about(tenant, ann_id(graph, tenant), include_superseded=True)]


def test_a_restatement_outlives_a_retraction_that_arrives_after_it(graph, tenant):
    """A: VP since April; B: VP since September (a restatement of the open fact); C, received last: no longer VP
    since July. VP holds again from September, asserted by B, as when C arrives before B."""
    a, _ = title(graph, tenant, "VP", d(2024, 4))
    b, again = title(graph, tenant, "VP", d(2024, 9))
    assert again.action == "duplicate"
    _, closed = stop(graph, tenant, d(2024, 7))
    assert closed == [again.fact_id]
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "retracted"),
        ("VP", d(2024, 9), None, "current"),
    ]
    assert [f.value for f in graph.facts_about(tenant, ann_id(graph, tenant), as_of=d(2024, 8))] == []
    [now] = graph.facts_about(tenant, ann_id(graph, tenant))
    assert [(p.episode_id, p.role) for p in graph.fact_provenance(tenant, now.id)] == [(b, "assertion")]
    # the retracted fact keeps what was recorded: A's assertion, B's confirmation then, C's retraction
    assert [p.role for p in graph.fact_provenance(tenant, closed[0])] == ["assertion", "confirmation", "retraction"]


def test_a_retraction_of_the_value_also_keeps_a_later_restatement(graph, tenant):
    title(graph, tenant, "VP", d(2024, 4))
    title(graph, tenant, "VP", d(2024, 9))
    stop(graph, tenant, d(2024, 7), value="VP")
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "retracted"),
        ("VP", d(2024, 9), None, "current"),
    ]


def test_a_restatement_before_the_retraction_stays_a_confirmation(graph, tenant):
    title(graph, tenant, "VP", d(2024, 4))
    june, _ = title(graph, tenant, "VP", d(2024, 6))
    sept, _ = title(graph, tenant, "VP", d(2024, 9))
    nov, _ = title(graph, tenant, "VP", d(2024, 11))
    _, [cut] = stop(graph, tenant, d(2024, 7))
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "retracted"),
        ("VP", d(2024, 9), None, "current"),
    ]
    assert june in [p.episode_id for p in graph.fact_provenance(tenant, cut)]
    [now] = graph.facts_about(tenant, ann_id(graph, tenant))
    assert [(p.episode_id, p.role) for p in graph.fact_provenance(tenant, now.id)] == [
        (sept, "assertion"), (nov, "confirmation")]
    # and the new fact keeps the later restatement: a second retraction before it asserts it again
    stop(graph, tenant, d(2024, 10))
    assert timeline(graph, tenant)[1:] == [
        ("VP", d(2024, 9), d(2024, 10), "retracted"),
        ("VP", d(2024, 11), None, "current"),
    ]


def test_a_restatement_from_the_retractions_own_time_holds_from_there(graph, tenant):
    """"VP since July" said while "VP since April" held, then "no longer VP on 1 July": VP again from July, as
    when the retraction arrives first (the restatement is then a new fact from July)."""
    title(graph, tenant, "VP", d(2024, 4))
    title(graph, tenant, "VP", d(2024, 7))
    stop(graph, tenant, d(2024, 7))
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "retracted"),
        ("VP", d(2024, 7), None, "current"),
    ]


def test_an_erased_restatement_is_not_asserted_again_by_a_late_retraction(gov, graph, db, tenant):
    _, first = title(graph, tenant, "VP", d(2024, 4))
    b, _ = title(graph, tenant, "VP", d(2024, 9))
    assert gov.forget(tenant, episode_id=b).counts["facts_kept"] == 1
    assert b not in str(fact_node(db, first.fact_id))
    stop(graph, tenant, d(2024, 7))
    assert timeline(graph, tenant) == [("VP", d(2024, 4), d(2024, 7), "retracted")]


def test_erasing_the_retraction_or_the_restatement_afterwards(gov, graph, tenant):
    """Erasing the retraction's episode does not reopen what it ended (docs/governance.md), nor does it take back
    the value the restatement asserted from its own start; erasing the restatement's episode then deletes that fact
    (its only support) and leaves the retracted one as it is."""
    title(graph, tenant, "VP", d(2024, 4))
    b, _ = title(graph, tenant, "VP", d(2024, 9))
    c, _ = stop(graph, tenant, d(2024, 7))
    gov.forget(tenant, episode_id=c)
    assert timeline(graph, tenant) == [
        ("VP", d(2024, 4), d(2024, 7), "retracted"),
        ("VP", d(2024, 9), None, "current"),
    ]
    gov.forget(tenant, episode_id=b)
    assert timeline(graph, tenant) == [("VP", d(2024, 4), d(2024, 7), "retracted")]


# ---- every arrival order gives one timeline (CRM records: a field set to null is a retraction kept as a clear) ----
def test_every_order_of_values_restatements_and_a_null_gives_one_timeline(make_services, tenant):
    """VP since April, VP since June (said again before the null), VP since September (said again after it) and
    "title": null in July, sent in each of the 24 orders (one contact per order): the titles read at each date are
    the same whatever the order."""
    s = make_services()
    records = {"A": ("VP", d(2024, 4)), "D": ("VP", d(2024, 6)), "B": ("VP", d(2024, 9)), "C": (None, d(2024, 7))}
    orders = list(permutations(records))
    for step in range(len(records)):   # the step-th record of every order, each order its own contact
        eps = []
        for n, order in enumerate(orders):
            value, when = records[order[step]]
            record = {"object": "contact", "id": f"c-{n}", "name": f"Ann Perkins {n}", "title": value,
                      "changed_at": when.isoformat()}
            eps.append(EpisodeIn(kind="event", content=json.dumps(record), occurred_at=when,
                                 idempotency_key=f"order-{n}-{step}"))
        out = [e for e, _ in s.ingest.append_episodes(tenant, eps)]
        Worker(s, tenants=[tenant]).run(until_idle=True)
        assert {s.ingest.job_status(tenant, e.id).status for e in out} == {"done"}
    dates = [d(2024, 3), d(2024, 4), d(2024, 5), d(2024, 6, 15), d(2024, 7), d(2024, 8), d(2024, 9), d(2024, 10),
             d(2030)]
    expected = [[], ["VP"], ["VP"], ["VP"], [], [], ["VP"], ["VP"], ["VP"]]
    got = {}
    for n, order in enumerate(orders):
        [ann] = s.graph.find_entities(tenant, f"Ann Perkins {n}", "Person")
        got["".join(order)] = [[f.value for f in s.graph.facts_about(tenant, ann.id, as_of=at,
                                                                     predicates=["HAS_TITLE"])]
                               for at in dates]
    assert {o: g for o, g in got.items() if g != expected} == {}
