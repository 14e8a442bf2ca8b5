"""Retention on the real Neo4j with an injectable clock: fact-class TTLs and tenant overrides, episode retention,
session TTL, legal holds blocking expiry, the sweeper, and tenant isolation."""
from __future__ import annotations

from datetime import timedelta

import pytest

from graphmem.errors import InvalidInput, TenantRequired
from graphmem.governance.models import RetentionSettings
from graphmem.timeutil import utcnow
from tests.test_governance_support import episode, fact, fact_node, gov, org, person, raw, tenant_counts  # noqa: F401


def _until(db, node_id):
    rows = raw(db, "MATCH (n {id: $id}) RETURN n.retain_until AS r", id=node_id)
    return rows[0]["r"].to_native() if rows and rows[0]["r"] else None


def test_fact_class_ttls_expire_with_the_clock(gov, graph, db, tenant):
    e = episode(graph, tenant, "Dana is working on the Q3 migration and prefers email")
    working = fact(graph, tenant, person("Dana"), "WORKING_ON", e, value="Q3 migration").fact_id   # activity: 42 days
    pref = fact(graph, tenant, person("Dana"), "PREFERS_CHANNEL", e, value="email").fact_id       # preference: 365
    works = fact(graph, tenant, person("Dana"), "WORKS_AT", e, obj=org("Globex")).fact_id         # employment: none
    now = utcnow()
    early = gov.sweep(tenant, now + timedelta(days=41))
    assert early.totals["facts"] == 0
    assert fact_node(db, working) is not None

    receipt = gov.sweep(tenant, now + timedelta(days=43))
    assert receipt.tenants[tenant].counts["facts"] == 1
    assert fact_node(db, working) is None and fact_node(db, pref) is not None

    gov.sweep(tenant, now + timedelta(days=400))
    assert fact_node(db, pref) is None and fact_node(db, works) is not None   # employment has no TTL
    assert [f.id for f in graph.facts_about(tenant, graph.find_entities(tenant, "Dana")[0].id)] == [works]


def test_tenant_override_recomputes_retain_until(gov, graph, db, tenant):
    e = episode(graph, tenant, "Dana is working on onboarding")
    working = fact(graph, tenant, person("Dana"), "WORKING_ON", e, value="onboarding").fact_id
    confirmed = fact_node(db, working)["last_confirmed_at"].to_native()
    assert _until(db, working) == confirmed + timedelta(days=42)

    view = gov.retention.update(tenant, RetentionSettings(fact_class_ttl_days={"activity": 7, "employment": 100}))
    assert view.effective_fact_class_ttl_days["activity"] == 7 and view.version == 1
    assert view.effective_fact_class_ttl_days["preference"] == 365        # not overridden: ontology default
    assert _until(db, working) == confirmed + timedelta(days=7)
    # a fact written after the change gets the override on the sweeper's stamp pass
    later = fact(graph, tenant, person("Dana"), "WORKS_AT", e, obj=org("Globex")).fact_id
    gov.sweep(tenant)
    basis = fact_node(db, later)["last_confirmed_at"].to_native()
    assert _until(db, later) == basis + timedelta(days=100)

    gov.retention.update(tenant, RetentionSettings())                      # back to the defaults
    assert _until(db, working) == confirmed + timedelta(days=42) and _until(db, later) is None

    with pytest.raises(InvalidInput) as err:
        gov.retention.update(tenant, RetentionSettings(fact_class_ttl_days={"gossip": 3}))
    assert err.value.field == "fact_class_ttl_days.gossip"
    assert gov.retention.settings(tenant).version == 2                     # nothing stored
    with pytest.raises(TenantRequired):
        gov.retention.settings("")


def test_episode_retention_sweeps_episodes_but_facts_keep_their_own_ttl(gov, graph, db, tenant):
    first = episode(graph, tenant, "Dana prefers email", minutes=0)
    f = fact(graph, tenant, person("Dana"), "PREFERS_CHANNEL", first, value="email").fact_id
    view = gov.retention.update(tenant, RetentionSettings(episode_retention_days=30))
    assert view.recomputed["episodes"] == 1
    ingested = graph.get_episode(tenant, first).ingested_at
    assert _until(db, first) == ingested + timedelta(days=30)
    second = episode(graph, tenant, "thanks", minutes=1)          # stored after the change: stamped on append
    assert _until(db, second) == graph.get_episode(tenant, second).ingested_at + timedelta(days=30)
    now = utcnow()

    receipt = gov.sweep(tenant, now + timedelta(days=29))
    assert receipt.tenants[tenant].counts["episodes"] == 0         # nothing is due yet

    receipt = gov.sweep(tenant, now + timedelta(days=31))
    assert receipt.tenants[tenant].counts["episodes"] == 2
    assert graph.session_episodes(tenant, "s1") == []
    kept = fact_node(db, f)
    assert kept is not None and kept["expired_source_count"] == 1    # the fact lives on under its own TTL
    assert receipt.tenants[tenant].audit_id == gov.audit_records(tenant)[0].id


def test_a_stopped_or_failed_sweep_ends_between_batches_and_audits_what_it_removed(gov, graph, db, tenant,
                                                                                   monkeypatch):
    """Stopping the sweeper (serve or worker shutting down) ends a large tenant's sweep after the current batch, not
    after the tenant (shutdown waited past a container's grace period), and what was removed is audited; so is
    what a sweep removed before it failed (another sweeper racing it): both went unaudited."""
    import threading
    for i in range(6):
        episode(graph, tenant, f"old note {i}", minutes=i)
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=1))
    monkeypatch.setattr(gov.sweeper.settings, "sweep_batch_size", 2)
    stop, write = threading.Event(), gov.sweeper.db.write
    batches = []

    def counting(fn):   # the stop comes while the first batch of episodes is being written
        if fn.__name__ == "episodes_batch":
            batches.append(fn)
            stop.set()
        return write(fn)
    monkeypatch.setattr(gov.sweeper.db, "write", counting)
    later = utcnow() + timedelta(days=2)
    receipt = gov.sweeper.sweep_tenant(tenant, later, stop)
    monkeypatch.setattr(gov.sweeper.db, "write", write)
    assert len(batches) == 1 and receipt.counts["episodes"] == 2 and len(graph.session_episodes(tenant, "s1")) == 4
    assert receipt.audit_id and gov.audit_records(tenant)[0].counts["episodes"] == 2

    calls = []

    def failing(fn):   # the second batch of episodes fails
        if fn.__name__ == "episodes_batch":
            calls.append(fn)
            if len(calls) == 2:
                raise RuntimeError("another sweeper took these")
        return write(fn)
    monkeypatch.setattr(gov.sweeper.db, "write", failing)
    with pytest.raises(RuntimeError):
        gov.sweeper.sweep_tenant(tenant, later)
    monkeypatch.setattr(gov.sweeper.db, "write", write)
    assert [a.counts["episodes"] for a in gov.audit_records(tenant) if a.action == "sweep"] == [2, 2]


def test_session_ttl_expires_idle_sessions(gov, graph, db, tenant):
    episode(graph, tenant, "old chat", session="idle")
    gov.retention.update(tenant, RetentionSettings(session_ttl_days=10))
    raw(db, "MATCH (s:Session {tenant_id: $t, id: 'idle'}) SET s.last_active_at = $at", t=tenant,
        at=utcnow() - timedelta(days=11))
    episode(graph, tenant, "fresh chat", session="active")
    raw(db, "CREATE (:Pin {tenant_id: $t, id: 'p-idle', session_id: 'idle', key: 'order_id', value: 'A-1'})", t=tenant)

    counts = gov.sweep(tenant).tenants[tenant].counts
    assert counts["sessions"] == 1 and counts["episodes"] == 1 and counts["pins"] == 1
    assert [r["id"] for r in raw(db, "MATCH (s:Session {tenant_id: $t}) RETURN s.id AS id", t=tenant)] == ["active"]


def test_legal_hold_blocks_expiry_until_released(gov, graph, db, tenant):
    e = episode(graph, tenant, "Dana is working on the audit", user="held")
    other = episode(graph, tenant, "Dana is working on payroll", user="free", session="s2")
    held_fact = fact(graph, tenant, person("Dana"), "WORKING_ON", e, value="the audit").fact_id
    free_fact = fact(graph, tenant, person("Dana"), "WORKING_ON", other, value="payroll").fact_id
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=5))
    hold, _ = gov.holds.place(tenant, "user", "held", "case 7")
    assert graph.get_episode(tenant, e).legal_hold and _until(db, e) is None and _until(db, held_fact) is None
    assert [h.id for h in gov.holds.list(tenant)] == [hold.id]
    late = episode(graph, tenant, "Dana is working on the audit, part two", user="held", session="s3")
    assert graph.get_episode(tenant, late).legal_hold and _until(db, late) is None   # held as it is written
    new_fact = fact(graph, tenant, person("Dana"), "WORKING_ON", late, value="the audit, part two").fact_id
    assert _until(db, new_fact) is None                  # and so is a fact it says (helper-found: it had a TTL)
    # another user's episode confirming the held fact does not give it a TTL again (helper-found: it did until
    # the next sweep's stamp)
    again = episode(graph, tenant, "Dana is still on the audit", user="free", session="s4")
    assert fact(graph, tenant, person("Dana"), "WORKING_ON", again, value="the audit").action == "duplicate"
    assert _until(db, held_fact) is None
    assert fact(graph, tenant, person("Dana"), "WORKING_ON", again, value="payroll").action == "duplicate"
    assert _until(db, free_fact) is not None                                        # not held: the TTL moves on
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=5))    # and stays held when recomputed
    assert _until(db, late) is None

    counts = gov.sweep(tenant, utcnow() + timedelta(days=100)).tenants[tenant].counts
    assert counts["episodes"] == 2 and counts["facts"] == 1                     # the free user's two episodes
    assert fact_node(db, held_fact) is not None and graph.get_episode(tenant, e).id == e
    assert fact_node(db, free_fact) is None

    gov.holds.release(tenant, hold.id)
    assert _until(db, e) is not None and not graph.get_episode(tenant, e).legal_hold
    counts = gov.sweep(tenant, utcnow() + timedelta(days=100)).tenants[tenant].counts
    assert counts["episodes"] == 2 and counts["facts"] == 2                     # the held user's, released


def test_sweeping_never_touches_another_tenant(gov, graph, db, tenant):
    other = tenant + "-other"
    for t in (tenant, other):
        e = episode(graph, t, "Dana is working on X")
        fact(graph, t, person("Dana"), "WORKING_ON", e, value="X")
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=1))
    before = tenant_counts(db, other)
    receipt = gov.sweep(tenant, utcnow() + timedelta(days=400))
    assert receipt.totals["episodes"] == 1 and receipt.totals["facts"] == 1 and list(receipt.tenants) == [tenant]
    assert tenant_counts(db, other) == before
    assert tenant in gov.sweeper.tenants() and other in gov.sweeper.tenants()


def test_sweep_receipts_list_every_kind_they_count(gov, graph, db, tenant):
    """A sweep receipt, its totals and its audit record list every kind the sweeper counts, zero or not (a client
    indexing counts["episodes"] got a KeyError when only facts were stamped), as forget receipts do; the tenant a
    sweep names has its receipt even when nothing was due."""
    from graphmem.governance.models import SWEEP_KINDS
    e = episode(graph, tenant, "Dana is working on the audit")
    fact(graph, tenant, person("Dana"), "WORKING_ON", e, value="the audit")
    raw(db, "MATCH (f:Fact {tenant_id: $t}) REMOVE f.retain_until, f.retention_basis", t=tenant)   # due a stamp
    receipt = gov.sweep(tenant)
    counts = receipt.tenants[tenant].counts
    assert list(counts) == sorted(SWEEP_KINDS) and counts["stamped_facts"] == 1 and counts["episodes"] == 0
    assert receipt.totals == counts
    quiet = gov.sweep(tenant)
    assert quiet.tenants[tenant].counts == dict.fromkeys(sorted(SWEEP_KINDS), 0) == quiet.totals
    assert quiet.tenants[tenant].audit_id is None                  # nothing removed, nothing audited
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=1))
    swept = gov.sweep(tenant, utcnow() + timedelta(days=400)).tenants[tenant]
    assert swept.counts["episodes"] == 1 and swept.counts["sessions"] == 0 and list(swept.counts) == sorted(SWEEP_KINDS)
    assert gov.audit_records(tenant)[0].counts == swept.counts


def test_an_expired_turn_takes_no_pin_from_a_session_that_lives_on(gov, graph, db, tenant):
    """Helper-found: with 30-day episode retention, the sweep of a live session's first turn deleted the order id
    that turn had pinned (set_by), as an erasure does; expiry is not erasure (the facts a turn said live on), and a
    pin is the session's typed state, which the session keeps until it expires itself."""
    first = episode(graph, tenant, "My order is A-10293", session="live")
    episode(graph, tenant, "Any news?", session="live", minutes=1)
    raw(db, "CREATE (:Pin {tenant_id: $t, id: 'p-live', session_id: 'live', key: 'order_id', value: 'A-10293', "
            "value_type: 'order_id', status: 'active', version: 1, set_by: $e})", t=tenant, e=first)
    raw(db, "MATCH (e:Episode {id: $e}) SET e.retain_until = $at", e=first, at=utcnow() - timedelta(seconds=1))

    counts = gov.sweep(tenant).tenants[tenant].counts
    assert counts["episodes"] == 1 and counts["pins"] == 0
    assert raw(db, "MATCH (p:Pin {tenant_id: $t, session_id: 'live'}) RETURN p.value AS v", t=tenant) == [
        {"v": "A-10293"}]
