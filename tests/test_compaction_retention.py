"""Compaction sends nothing past retention to the LLM and writes no summary of turns past retention: the summarizer
looks at the folded turns' retention right before every request (`ChatClient.complete`'s `before_send`: the first
and each retry), and the summary write checks them under their locks."""
from __future__ import annotations

import json
from datetime import UTC, datetime

from graphmem.governance.models import RetentionSettings
from tests.fake_openai import Reply, error_body
from tests.ingest_fixture import LLM_TIMEOUT_S
from tests.test_context_sessions import say
from tests.test_ingest_llm import PATH, ok

PAST = datetime(2020, 1, 1, tzinfo=UTC)


def _session(make_context, fake_llm, tenant, sid):
    """A context service whose summarizer is the fake LLM (2 retries), with two turns of `sid` to fold: the first,
    "Zanzibar walrus invoice 4471", is compacted, the newest stays raw. Returns (context, first episode)."""
    ctx = make_context(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                       llm_max_retries=2, compaction_keep_tokens=0)
    ctx.services.governance.retention.update(tenant, RetentionSettings(session_ttl_days=1))
    ctx.append_turn(tenant, sid, say(f"{sid}1", "u1", "Zanzibar walrus invoice 4471 never arrived", minute=0))
    ctx.append_turn(tenant, sid, say(f"{sid}2", "u1", "The courier was Quokka Express", minute=1))
    ctx.wait_for_compaction(tenant, sid)
    first = next(e for e in ctx.services.graph.session_episodes(tenant, sid) if "Zanzibar" in e.content)
    return ctx, first


def _summaries(db, tenant, sid):
    with db.driver.session() as s:
        return s.run("MATCH (m:Summary {tenant_id: $t, session_id: $sid}) RETURN m.text AS text", t=tenant,
                     sid=sid).data()


def test_no_retry_of_a_summary_request_once_a_folded_turn_is_past_retention(make_context, fake_llm, db, tenant):
    """Found by a helper: the LLM summarizer had its own openai client, whose retries re-sent the turns after a
    429/5xx (and any Retry-After wait) without looking at retention again, and a failed call fell back to the
    extractive summary, written as any other. Now it uses `ChatClient` with the compaction's check as `before_send`:
    once the session is idle past its TTL, or a folded turn past its own retention, nothing more is sent and the
    compaction gives up, writing nothing."""
    for sid, expire in (("idle", "MATCH (x:Session {tenant_id: $t, id: 'idle'}) SET x.retain_until = $past"),
                        ("own", "MATCH (e:Episode {tenant_id: $t, session_id: 'own'}) WHERE e.content STARTS WITH "
                                "'Zanzibar' SET e.retain_until = $past")):
        ctx, _ = _session(make_context, fake_llm, tenant, sid)

        def expire_then_overloaded(req, expire=expire):     # retention passes during the call (test-only raw write)
            with db.driver.session() as s:
                s.run(expire, t=tenant, past=PAST)
            return Reply(503, error_body("overloaded"), headers={"Retry-After": "0"})
        fake_llm.reset()
        fake_llm.set_default(PATH, expire_then_overloaded)
        result = ctx.compact_now(tenant, sid, force=True)

        sent = fake_llm.requests_for(PATH)
        assert len(sent) == 1 and "Zanzibar" in json.dumps(sent[0].json()), [r.json() for r in sent]
        assert result.summary is None and "retention" in result.reason, result
        assert _summaries(db, tenant, sid) == []


def _compact_expiring(ctx, fake_llm, db, tenant, episode_id, answer):
    """A forced compaction of session "s1" during whose LLM call episode `episode_id` passes its retention (test-only
    raw write); the LLM answers `answer`. Returns the compaction's result."""
    def expire_then_answer(req):
        with db.driver.session() as s:
            s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $past", id=episode_id, past=PAST)
        return ok(answer)
    fake_llm.reset()
    fake_llm.set_default(PATH, expire_then_answer)
    return ctx.compact_now(tenant, "s1", force=True)


def test_no_summary_is_written_of_a_turn_that_passed_retention_during_the_call(make_context, fake_llm, db, tenant):
    """Found by a helper: the summary write checked that the folded turns still existed, not that they were within
    retention: a turn past its own retention by the time the summary came back was written into a new revision
    (which the reads then hid, until the sweeper deleted it). The write now refuses: the compaction gives up."""
    ctx, first = _session(make_context, fake_llm, tenant, "s1")
    result = _compact_expiring(ctx, fake_llm, db, tenant, first.id,
                               "- user: Zanzibar walrus invoice 4471 never arrived")

    assert len(fake_llm.requests_for(PATH)) == 1
    assert result.summary is None and "retention" in result.reason, result
    assert _summaries(db, tenant, "s1") == []



def _pinned_session(make_context, fake_llm, tenant, sid):
    """A context service whose summarizer is the fake LLM, with two turns of `sid`: the first (folded) says an order
    id and an approval id, two pin candidates. Returns (context, first episode)."""
    ctx = make_context(llm_base_url=fake_llm.base_url, llm_api_key="test", llm_timeout_s=LLM_TIMEOUT_S,
                       llm_max_retries=2, compaction_keep_tokens=0)
    ctx.append_turn(tenant, sid, say(f"{sid}1", "u1", "My order A-10293 never arrived, approval id AP-5521", minute=0))
    ctx.append_turn(tenant, sid, say(f"{sid}2", "u1", "The courier was Quokka Express", minute=1))
    ctx.wait_for_compaction(tenant, sid)
    return ctx, next(e for e in ctx.services.graph.session_episodes(tenant, sid) if "A-10293" in e.content)


def test_pin_candidates_go_with_the_turn_they_came_from(make_context, fake_llm, db, tenant):
    """Found by a helper: expiry kept every pin an expired turn had set, so the candidates compaction proposed from
    a turn (nobody confirmed them) outlived it. Now the expiry cascade removes the candidates whose source turn it
    removes; a pin the agent wrote from that turn (a confirmed candidate is the agent's) stays with its session;
    and no candidate is written from a turn already past retention."""
    ctx, first = _pinned_session(make_context, fake_llm, tenant, "s1")
    fake_llm.reset()
    fake_llm.set_default(PATH, lambda req: ok("- user: order A-10293 never arrived"))
    assert ctx.compact_now(tenant, "s1", force=True).summary is not None
    proposed = sorted(p.key for p in ctx.pins.list(tenant, "s1", status="candidate") if p.set_by == first.id)
    assert len(proposed) == 2, ctx.pins.list(tenant, "s1")
    pin = ctx.pins.get(tenant, "s1", proposed[0])            # the agent confirms one (a write of its version)
    ctx.pins.put(tenant, "s1", proposed[0], pin.value, pin.version, set_by=first.id)
    with db.driver.session() as s:                          # the first turn's retention passes (test-only raw write)
        s.run("MATCH (e:Episode {id: $id}) SET e.retain_until = $past", id=first.id, past=PAST)

    assert ctx.pins.add_candidates(tenant, "s1", [("late_id", pin.value, first.id)]) == []
    receipt = ctx.services.governance.sweeper.sweep_tenant(tenant, datetime.now(UTC))
    assert receipt.counts["episodes"] == 1 and receipt.counts["pins"] == 1, receipt
    left = ctx.pins.list(tenant, "s1")
    assert [(p.key, p.status) for p in left] == [(proposed[0], "active")], left


def test_a_compaction_giving_up_for_retention_withdraws_its_candidates(make_context, fake_llm, db, tenant):
    """Found by a helper: a compaction proposes pin candidates before it summarizes; when a turn it folds passed
    retention during the call, it gave up, and the candidates it proposed from that turn stayed (listed by every
    pin read until the sweep, which kept them too). Now a compaction that gives up expires the folded turns past
    retention at once, as the sweeper would (`Sweeper.expire_past_retention`), and their candidates with them."""
    ctx, first = _pinned_session(make_context, fake_llm, tenant, "s1")
    result = _compact_expiring(ctx, fake_llm, db, tenant, first.id, "- user: order A-10293 never arrived")
    assert result.summary is None and "retention" in result.reason and len(result.pin_candidates) == 2, result
    assert ctx.pins.list(tenant, "s1") == []
    with db.driver.session() as s:
        assert s.run("MATCH (e:Episode {id: $id}) RETURN count(e) AS n", id=first.id).single()["n"] == 0
