"""Erasing (or expiring) the episode that stated the end a fact carries undoes that end: the fact ends where what
remains says (open, or the end another live episode stated), as the timeline would be without that episode."""
from __future__ import annotations

from datetime import datetime, timezone
from itertools import permutations

import pytest

from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.test_governance_support import gov  # noqa: F401

UTC = timezone.utc


def d(y, m=1, day=1):
    return datetime(y, m, day, tzinfo=UTC)


SCENARIOS = {
    # "VP since April", "VP from February until June" (history before it, whose end closed the April fact);
    # erasing the second leaves VP since April, open
    "an end stated by an earlier start": (
        [("VP", d(2024, 4), None), ("VP", d(2024, 2), d(2024, 6))],
        {d(2024, 5): ["VP"], d(2024, 7): ["VP"], d(2025): ["VP"]}),
    # "VP since April", "VP from May until June" (a duplicate whose end closed it); erasing the second: VP open
    "an end stated by a duplicate": (
        [("VP", d(2024, 4), None), ("VP", d(2024, 5), d(2024, 6))],
        {d(2024, 3): [], d(2024, 5): ["VP"], d(2024, 7): ["VP"], d(2025): ["VP"]}),
    # another live episode stated an end too: the fact ends at that one
    "two stated ends, the earlier erased": (
        [("VP", d(2024, 4), None), ("VP", d(2024, 8), d(2024, 10)), ("VP", d(2024, 5), d(2024, 6))],
        {d(2024, 5): ["VP"], d(2024, 7): ["VP"], d(2024, 9): ["VP"], d(2024, 11): []}),
}


def _run(gov, graph, db, tenant, scenario, mode):
    """The statements of `scenario`, each its own episode, in every arrival order (one person per order); then the
    last statement's episode is erased (or expired, `mode`). Returns {order: {date: the values read then}} and the
    ids of the episodes erased."""
    said, expected = SCENARIOS[scenario]
    got, gone_ids = {}, []
    for n, order in enumerate(permutations(range(len(said)))):
        who = EntityRef(kind="Person", name=f"Walter Skinner {n}")
        episodes = {}
        for i in order:
            value, start, end = said[i]
            e, _ = graph.append_episode(tenant, EpisodeIn(content=f"{value} from {start:%Y-%m}", occurred_at=start))
            graph.assert_fact(tenant, FactIn(subject=who, predicate="HAS_TITLE", value=value, valid_from=start,
                                             valid_to=end, episode_id=e.id))
            episodes[i] = e.id
        gone = episodes[len(said) - 1]
        gone_ids.append(gone)
        if mode == "erase":
            gov.forget(tenant, episode_id=gone)
        else:
            db.write(lambda tx: gov.eraser.expire(tx, tenant, episode_ids=[gone], now=d(2026)))
        [who_id] = graph.find_entities(tenant, who.name, "Person")
        got[order] = {at: sorted(f.value for f in graph.facts_about(tenant, who_id.id, as_of=at,
                                                                    predicates=["HAS_TITLE"]))
                      for at in expected}
    return got, gone_ids


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_erasing_the_episode_that_stated_an_end_undoes_it(gov, graph, db, tenant, scenario):
    """Whatever the arrival order, the values read at each date after the erasure are those the other statements
    give (an end only the erased episode stated ended VP for ever, in one order or both)."""
    expected = SCENARIOS[scenario][1]
    got, _ = _run(gov, graph, db, tenant, scenario, "erase")
    assert {o: g for o, g in got.items() if g != expected} == {}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_expiry_keeps_the_ends_and_drops_the_expired_episode_from_them(gov, graph, db, tenant, scenario):
    """Expiry is not erasure: the facts the expired episode gave live on, with the ends they carry, so no end is
    undone (the values read are those before the expiry, the same in every order); the expired episode's id is
    left on no fact."""
    got, gone = _run(gov, graph, db, tenant, scenario, "expire")
    assert len({tuple((at, tuple(v)) for at, v in g.items()) for g in got.values()}) == 1
    assert db.rows("governance/stated_ends", tenant_id=tenant, episode_ids=gone, deleted=[], single_valued=[]) == []
