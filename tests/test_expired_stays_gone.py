"""What is past its retention stays gone before the sweep, to writes and to settings changes too: the same value
asserted again is a new fact, not a renewal of the expired one, and a longer retention brings nothing back. What a
user sees must not depend on when the sweeper last ran."""
from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.errors import NotFound
from graphmem.governance.models import RetentionSettings
from graphmem.timeutil import utcnow
from tests.test_governance_support import T0, episode, fact, fact_node, gov, org, person, raw  # noqa: F401


def _confirmed_days_ago(db, fact_ids, days):
    """What the passage of `days` does to facts last asserted then (test-only raw write); a restamp follows."""
    raw(db, "MATCH (f:Fact) WHERE f.id IN $ids SET f.last_confirmed_at = $at", ids=list(fact_ids),
        at=utcnow() - timedelta(days=days))


def test_a_fact_past_its_ttl_said_again_is_a_new_fact_not_the_old_one_renewed(gov, graph, db, tenant):
    """Helper-found: a fact past its TTL (404 to every read), asserted again before the sweep by another user's
    episode, was a `duplicate` of the expired one: it came back with its old id, start, history and provenance (the
    first user's episode, so in that user's memories and window again). The same after a sweep gave a new fact of
    the new episode's. Now both give the new fact; the same for a symmetric fact said the other way round, and a
    retraction no longer finds an expired fact."""
    first = episode(graph, tenant, "Leopold prefers carrier owl; Octavia knows Barnaby; Mira prefers fax",
                    user="u24", session="s130")
    owl = fact(graph, tenant, person("Leopold Marchbanks"), "PREFERS_CHANNEL", first, value="carrier owl").fact_id
    knows = fact(graph, tenant, person("Octavia"), "KNOWS", first, obj=person("Barnaby")).fact_id
    fax = fact(graph, tenant, person("Mira"), "PREFERS_CHANNEL", first, value="fax").fact_id
    _confirmed_days_ago(db, [owl, knows, fax], 400)            # preference: 365 days
    gov.retention.update(tenant, RetentionSettings(fact_class_ttl_days={"relationship": 1}))
    for gone in (owl, knows, fax):
        with pytest.raises(NotFound):
            graph.get_fact(tenant, gone)

    second = episode(graph, tenant, "Leopold still prefers carrier owl, and Barnaby knows Octavia",
                     user="u25", session="s131")
    again = fact(graph, tenant, person("Leopold Marchbanks"), "PREFERS_CHANNEL", second, value="carrier owl",
                 days=30)
    both = fact(graph, tenant, person("Barnaby"), "KNOWS", second, obj=person("Octavia"), days=30)
    for new, old in ((again, owl), (both, knows)):
        assert new.action == "created" and new.fact_id != old, new
        assert [p.episode_id for p in graph.fact_provenance(tenant, new.fact_id)] == [second]
        assert graph.get_fact(tenant, new.fact_id).valid_from == T0 + timedelta(days=30)   # its own start
        assert [f.id for f in graph.fact_history(tenant, new.fact_id)] == [new.fact_id]
    mira = graph.find_entities(tenant, "Mira")[0].id
    with pytest.raises(NotFound) as err:
        graph.retract(tenant, mira, "PREFERS_CHANNEL", second)
    assert err.value.field == "predicate"
    assert fact_node(db, fax)["status"] == "current"           # no retraction written on it

    counts = gov.sweep(tenant).tenants[tenant].counts             # the sweep takes the three expired facts only
    assert counts["facts"] == 3
    assert all(fact_node(db, f) is None for f in (owl, knows, fax))
    assert graph.get_fact(tenant, again.fact_id).value == "carrier owl"
    assert graph.get_fact(tenant, both.fact_id).predicate == "KNOWS"


def test_a_longer_retention_brings_back_nothing_that_had_expired(gov, graph, db, tenant):
    """Helper-found: a retention PUT recomputed `retain_until` from scratch, so making retention longer (or removing
    an override) before the sweep made expired episodes, sessions with their pins and facts readable again (search,
    export, who-at), and what a user saw depended on whether the hourly sweep had run. Now what had passed its
    `retain_until` keeps it, and the sweep removes it (a session too, though it is no longer idle past the longer
    TTL); what had not expired gets the longer retention."""
    old = episode(graph, tenant, "The zebu lasso code is XQ-8181", session="s180")
    idle = episode(graph, tenant, "The yak saddle locker is YK-6262", session="s181")
    live = episode(graph, tenant, "The llama harness is in bay 7", session="s182")
    works = fact(graph, tenant, person("Beatrix Quill"), "WORKS_AT", live, obj=org("Gorsefield Mills")).fact_id
    short = RetentionSettings(episode_retention_days=30, session_ttl_days=10,
                              fact_class_ttl_days={"employment": 2})
    gov.retention.update(tenant, short)
    raw(db, "MATCH (e:Episode {id: $id}) SET e.ingested_at = $at", id=old, at=utcnow() - timedelta(days=40))
    raw(db, "MATCH (s:Session {tenant_id: $t, id: 's181'}) SET s.last_active_at = $at", t=tenant,
        at=utcnow() - timedelta(days=20))
    _confirmed_days_ago(db, [works], 5)
    gov.retention.update(tenant, short)                           # the clock has passed: restamped, expired

    def gone() -> None:
        for e in (old, idle):
            with pytest.raises(NotFound):
                graph.get_episode(tenant, e)
        with pytest.raises(NotFound):
            graph.get_fact(tenant, works)
        assert graph.session_episodes(tenant, "s181") == []
    gone()

    longer = gov.retention.update(tenant, RetentionSettings(episode_retention_days=60, session_ttl_days=30))
    gone()                                                        # was: all three readable again
    assert graph.get_episode(tenant, live).id == live             # the live one gets the longer retention
    assert raw(db, "MATCH (e:Episode {id: $id}) RETURN e.retain_until AS r", id=live)[0]["r"].to_native() \
        == graph.get_episode(tenant, live).ingested_at + timedelta(days=60)
    assert longer.version == 3
    gov.retention.update(tenant, RetentionSettings())              # no retention at all: still gone
    gone()

    counts = gov.sweep(tenant).tenants[tenant].counts
    assert (counts["sessions"], counts["episodes"], counts["facts"]) == (1, 2, 1), counts
    assert raw(db, "MATCH (s:Session {tenant_id: $t}) RETURN s.id AS id ORDER BY id", t=tenant) == [
        {"id": "s180"}, {"id": "s182"}]
    assert graph.get_episode(tenant, live).id == live
