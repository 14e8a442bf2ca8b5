"""An erasure or expiry of more episode content than one transaction deletes (`erasure_step_chars`) goes in steps:
forgetting a user or a session, the sweeper's session and episode passes, and a write expiring an idle session.
Stepped or not, the graph that remains is the same; the receipt sums the steps (here the same counts; a fact one
step keeps, another of the user's episodes still supporting it, and a later step deletes counts in both); every step
is audited; a hold anywhere on the target, or on an episode supporting a fact about the user's own entity, refuses
the first step. Helper-found: forgetting a user of 1,200 tool results of 99k characters (119M) was a
503 at commit, over the 716 MiB of transaction memory a 1g heap allows; with the shipped step (10M characters) it
takes 12 steps, 6.7 s. Here the step is 2,000 characters and an episode 700, so 2 episodes a step."""
from __future__ import annotations

import uuid
from collections import Counter
from datetime import timedelta

import pytest

from graphmem.errors import Refused
from graphmem.governance.models import RetentionSettings
from graphmem.timeutil import utcnow
from tests.graph_fixture import tenant_labels
from tests.test_governance_support import episode, fact, gov, org, person, raw  # noqa: F401

USER = "alex"
STEP = 2000


def _text(i: int, session: str) -> str:
    """Episode i of a session: 700 characters of an ordinary note."""
    head = f"Note {i} of {session}: Mulder {i} works at Globex and asked about the renewal. "
    return (head + "We went over the contract terms again. " * 20)[:700]


def _story(graph, tenant: str) -> dict[str, str]:
    """Alex's 12 episodes in sessions sa1-sa3 (4 each, 700 characters), facts they support (one also supported by
    Bo's episode, one superseded by a later one of Alex's), and a preference on Alex's own entity."""
    eps = {}
    for s in ("sa1", "sa2", "sa3"):
        for i in range(4):
            eps[f"{s}-{i}"] = episode(graph, tenant, _text(i, s), user=USER, session=s, minutes=10 * int(s[-1]) + i)
    bo = episode(graph, tenant, "Mulder 0 works at Globex, says Bo", user="bo", session="sb", minutes=50)
    mulder = person("Mulder 0")
    fact(graph, tenant, mulder, "WORKS_AT", eps["sa1-0"], obj=org("Globex"))
    fact(graph, tenant, mulder, "WORKS_AT", bo, obj=org("Globex"))                 # kept: Bo said it too
    fact(graph, tenant, person("Mulder 1"), "WORKS_AT", eps["sa1-1"], obj=org("Globex"))
    fact(graph, tenant, person("Mulder 1"), "WORKS_AT", eps["sa2-1"], obj=org("Initech"), days=30)
    me = person("Alex", external_ids=[f"user:{USER}"])
    fact(graph, tenant, me, "PREFERS_CHANNEL", eps["sa3-2"], value="email")
    return eps


def _facts(graph, tenant: str) -> list[tuple]:
    """What the tenant still believes about Mulder 0 and Mulder 1 (statement, status, valid_to)."""
    out = []
    for name in ("Mulder 0", "Mulder 1"):
        for e in graph.find_entities(tenant, name):
            out += [(f.statement, f.status, f.valid_to) for f in graph.facts_about(tenant, e.id,
                                                                                 include_superseded=True)]
    return sorted(out, key=str)


def _counting(monkeypatch, db) -> list[str]:
    """The names of the write transactions' functions, as they run."""
    names, write = [], db.write

    def counted(fn):
        names.append(getattr(fn, "__name__", ""))
        return write(fn)
    monkeypatch.setattr(db, "write", counted)
    return names


def test_forgetting_a_user_over_the_step_size_goes_in_steps_and_leaves_what_one_transaction_would(
        gov, graph, db, tenant, monkeypatch):
    whole_tenant = f"t-{uuid.uuid4().hex[:12]}"
    _story(graph, whole_tenant)
    _story(graph, tenant)
    whole = gov.forget(whole_tenant, user_id=USER)
    assert len(gov.audit_records(whole_tenant)) == 1

    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    writes = _counting(monkeypatch, db)
    stepped = gov.forget(tenant, user_id=USER)
    assert len(writes) == 6                                   # 5 steps of 2 episodes, then the rest with the user
    assert stepped.counts == whole.counts
    assert stepped.counts["episodes"] == 12 and stepped.counts["sessions"] == 3 and stepped.counts["facts_kept"] == 1
    assert stepped.counts["facts"] == 3 and stepped.counts["entities"] >= 2      # Mulder 1, Alex (and Initech)
    records = gov.audit_records(tenant)
    assert len(records) == 6 and {(r.action, r.target_kind) for r in records} == {("forget", "user")}
    assert stepped.audit_id in {r.id for r in records}           # all at the erasure's time: one instant
    assert sum((Counter(r.counts) for r in records), Counter()) == Counter({k: v for k, v in whole.counts.items() if v})

    def without_audit(t):
        return {k: v for k, v in tenant_labels(db, t).items() if "Audit" not in k}
    assert without_audit(tenant) == without_audit(whole_tenant)
    assert _facts(graph, tenant) == _facts(graph, whole_tenant) != []
    assert raw(db, "MATCH (n {tenant_id: $t}) WHERE n.user_id = $u RETURN n.id AS id", t=tenant, u=USER) == []


def test_forgetting_a_session_over_the_step_size_goes_in_steps(gov, graph, db, tenant, monkeypatch):
    eps = _story(graph, tenant)
    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    writes = _counting(monkeypatch, db)
    receipt = gov.forget(tenant, session_id="sa2")
    assert len(writes) == 2 and receipt.counts["episodes"] == 4 and receipt.counts["sessions"] == 1
    assert graph.session_episodes(tenant, "sa2") == []
    assert [e.id for e in graph.session_episodes(tenant, "sa1")] == [eps[f"sa1-{i}"] for i in range(4)]
    now = graph.facts_about(tenant, graph.find_entities(tenant, "Mulder 1")[0].id)   # Initech's erased: Globex again
    assert [(f.statement, f.status) for f in now] == [("Mulder 1 works at Globex", "current")]


def test_a_hold_anywhere_on_the_user_refuses_the_first_step(gov, graph, db, tenant, monkeypatch):
    """The hold is on Alex's last session: a step-by-step erasure checks the whole target in every step, so it
    refuses before anything of the first sessions is erased."""
    _story(graph, tenant)
    gov.holds.place(tenant, "session", "sa3", "case 2024-17")
    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    before = {k: v for k, v in tenant_labels(db, tenant).items() if "Audit" not in k}
    with pytest.raises(Refused) as err:
        gov.forget(tenant, user_id=USER)
    assert err.value.field == "user_id" and "hold" in err.value.detail
    assert {k: v for k, v in tenant_labels(db, tenant).items() if "Audit" not in k} == before


def test_a_hold_on_another_users_episode_about_the_user_refuses_the_first_step(gov, graph, db, tenant, monkeypatch):
    """Helper-found: Bo's held episode supports a fact about Alex's own entity, which forgetting Alex deletes
    whatever supports it. In one transaction that is refused with nothing deleted; stepped, the first steps erased
    four of Alex's episodes before the last one was refused. Now the first step refuses."""
    _story(graph, tenant)
    bo = episode(graph, tenant, "Alex prefers email, says Bo", user="bo", session="sb-held", minutes=90)
    fact(graph, tenant, person("Alex", external_ids=[f"user:{USER}"]), "PREFERS_CHANNEL", bo, value="email")
    gov.holds.place(tenant, "session", "sb-held", "case 2024-18")
    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    before = {k: v for k, v in tenant_labels(db, tenant).items() if "Audit" not in k}
    writes = _counting(monkeypatch, db)
    with pytest.raises(Refused) as err:
        gov.forget(tenant, user_id=USER)
    assert err.value.field == "user_id" and "legal hold" in err.value.detail
    assert len(writes) == 1                                    # the first step, rolled back
    assert {k: v for k, v in tenant_labels(db, tenant).items() if "Audit" not in k} == before
    assert [r.action for r in gov.audit_records(tenant)] == ["hold"]


def test_the_sweeper_expires_sessions_and_episodes_in_steps(gov, graph, db, tenant, monkeypatch):
    _story(graph, tenant)
    gov.retention.update(tenant, RetentionSettings(session_ttl_days=10))
    raw(db, "MATCH (s:Session {tenant_id: $t}) WHERE s.id STARTS WITH 'sa' SET s.last_active_at = $at", t=tenant,
        at=utcnow() - timedelta(days=11))
    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    writes = _counting(monkeypatch, db)
    counts = gov.sweep(tenant).tenants[tenant].counts
    assert writes.count("sessions_batch") == 6                # one a step; the last finds no more to do
    assert counts["sessions"] == 3 and counts["episodes"] == 12
    assert [r["id"] for r in raw(db, "MATCH (s:Session {tenant_id: $t}) RETURN s.id AS id", t=tenant)] == ["sb"]

    for i in range(5):                                        # the episode pass: retention of Bo's session's notes
        episode(graph, tenant, _text(i, "sb"), user="bo", session="sb", minutes=60 + i)
    gov.retention.update(tenant, RetentionSettings(episode_retention_days=1))
    writes.clear()
    counts = gov.sweep(tenant, utcnow() + timedelta(days=2)).tenants[tenant].counts
    assert writes.count("episodes_batch") == 3 and counts["episodes"] == 6    # Bo's own and 5 of 700 characters
    assert graph.session_episodes(tenant, "sb") == []


def test_a_write_to_an_idle_session_expires_it_in_steps(gov, graph, db, tenant, monkeypatch):
    _story(graph, tenant)
    gov.retention.update(tenant, RetentionSettings(session_ttl_days=10))
    monkeypatch.setattr(graph.settings, "erasure_step_chars", STEP)
    writes = _counting(monkeypatch, db)
    got = gov.sweeper.expire_idle_sessions(tenant, ["sa1", "sa2", "sb"], now=utcnow() + timedelta(days=11))
    assert got["sessions"] == 3 and got["episodes"] == 9      # sb: Bo's one episode
    assert len(writes) == 4                                    # (4 + 4 + 1) x 700 characters: 3 steps, then the rest
    sweeps = [r for r in gov.audit_records(tenant) if r.action == "sweep"]
    assert len(sweeps) == 4 and sum(r.counts["episodes"] for r in sweeps) == 9
    assert [e.id for e in graph.session_episodes(tenant, "sa3")] != []
