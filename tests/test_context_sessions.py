"""Sessions on the real Neo4j: two tabs are two isolated sessions, preferences cross sessions only with consent and
never across users or tenants, the session TTL, degradation when search is down or slow, and the turn append's
idempotency and pin checks."""
from __future__ import annotations

import threading
import time
from datetime import datetime, timedelta, timezone

import pytest

from graphmem.context.models import ContextRequest, PinUpdate, TurnEpisode, TurnIn
from graphmem.context.sessions import Consent
from graphmem.errors import Conflict, InvalidInput, Unavailable
from graphmem.context.pins import PinKeyDef
from graphmem.models import EntityRef, EpisodeIn, FactIn
from graphmem.recall.models import SearchResponse
from graphmem.timeutil import utcnow
from tests.context_fixture import PATIENT_SEARCH

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
POLICY = "You are a careful assistant."


def say(key, user, text, minute=0, pins=()):
    return TurnIn(idempotency_key=key, user_id=user, pins=list(pins),
                  episodes=[TurnEpisode(role="user", content=text, occurred_at=T0 + timedelta(minutes=minute))])


def load(ctx, tenant, sid, query="", budget=2000, user_id=None):
    return ctx.assemble(tenant, sid, ContextRequest(query=query, budget_tokens=budget, model="gpt-4",
                                                    system_policy=POLICY, user_id=user_id))


def test_two_tabs_of_one_user_are_isolated(make_context, tenant):
    # generous search timeout: a search that times out on a busy machine would leave the other tab's turn out
    # whether or not the window keeps tabs apart
    ctx = make_context(**PATIENT_SEARCH)
    ctx.append_turn(tenant, "tab-1", say("a1", "u1", "Please cancel my gym membership renewal", pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "GYM-5521"})]))
    ctx.append_turn(tenant, "tab-2", say("b1", "u1", "What's the weather like in Lisbon tomorrow?"))
    w2 = load(ctx, tenant, "tab-2", query="cancel gym membership renewal GYM-5521")
    assert not [d for d in w2.degraded if d.source == "search"], w2.degraded        # the search did run
    assert "Lisbon" in w2.text
    assert "gym" not in w2.text.lower() and "GYM-5521" not in w2.text
    w1 = load(ctx, tenant, "tab-1", query="weather Lisbon")
    assert "GYM-5521" in w1.text and "Lisbon" not in w1.text
    other = tenant + "-x"
    assert "gym" not in load(ctx, other, "tab-1", query="cancel gym membership").text.lower()   # tenants never mix


def test_preferences_cross_sessions_only_with_consent(make_context, tenant, graph):
    ctx = make_context(**PATIENT_SEARCH)
    r = ctx.append_turn(tenant, "s-a", say("a1", "u1", "Dana Reyes here: please contact me by email, not phone."))
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Dana Reyes"),
                                       predicate="PREFERS_CHANNEL", value="email", episode_id=r.episode_ids[0],
                                       statement="Dana Reyes prefers to be contacted by email")])
    ctx.append_turn(tenant, "s-b", say("b1", "u1", "Hi again"))
    ctx.append_turn(tenant, "s-c", say("c1", "u2", "Hello"))
    q = "how does Dana Reyes prefer to be contacted"
    assert "prefers to be contacted by email" in load(ctx, tenant, "s-a", q).text        # its own session
    w = load(ctx, tenant, "s-b", q)
    assert "prefers to be contacted by email" not in w.text
    assert any("withheld" in n for n in w.notes)
    ctx.sessions.set_consent(tenant, Consent(scope="user", user_id="u1", share_preferences=True))
    w = load(ctx, tenant, "s-b", q)
    assert "prefers to be contacted by email" in w.text
    fact_piece = next(p for p in w.pieces if "prefers to be contacted" in p.text)
    assert fact_piece.tier == "retrieved" and fact_piece.citations[0].episode_ids == [r.episode_ids[0]]
    # a session not created yet: its first window takes the user from the request
    assert "prefers to be contacted by email" in load(ctx, tenant, "s-new", q, user_id="u1").text
    assert "prefers to be contacted by email" not in load(ctx, tenant, "s-new", q, user_id="u2").text
    assert "prefers to be contacted by email" not in load(ctx, tenant, "s-new", q).text
    # another user of the tenant never gets u1's preference, even with a tenant-wide consent
    ctx.sessions.set_consent(tenant, Consent(scope="tenant", share_preferences=True))
    assert "prefers to be contacted by email" not in load(ctx, tenant, "s-c", q).text
    # the user's own refusal beats the tenant-wide consent
    ctx.sessions.set_consent(tenant, Consent(scope="user", user_id="u1", share_preferences=False))
    assert "prefers to be contacted by email" not in load(ctx, tenant, "s-b", q).text
    with pytest.raises(InvalidInput) as err:
        ctx.sessions.set_consent(tenant, Consent(scope="user", share_preferences=True))
    assert err.value.field == "user_id"



def test_another_users_episodes_and_preferences_without_a_session_stay_out(make_context, tenant, graph):
    """An episode stored without a session still belongs to its user: it and a preference learned only from it
    never enter another user's window (they did: only the session was compared)."""
    ctx = make_context(**PATIENT_SEARCH)
    alice = ctx.services.ingest.append_episode(tenant, EpisodeIn(
        content="Alice Zed private note: my door code is 7781 zebra", occurred_at=T0, user_id="alice"))[0]
    graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Alice Zed"), predicate="PREFERS_CHANNEL",
                                       value="whatsapp zebra", episode_id=alice.id,
                                       statement="Alice Zed prefers whatsapp zebra")])
    ctx.append_turn(tenant, "bob-s", say("b1", "bob", "Hello there"))
    ctx.append_turn(tenant, "alice-s", say("a1", "alice", "Hi, it is Alice"))
    q = "Alice Zed zebra door code preferences"
    bob = load(ctx, tenant, "bob-s", q)
    assert "7781" not in bob.text and "whatsapp zebra" not in bob.text, bob.text
    assert any("withheld" in n for n in bob.notes)
    own = load(ctx, tenant, "alice-s", q)                          # her own sessions still see both
    assert "7781" in own.text and "whatsapp zebra" in own.text, own.text


def test_a_refused_turn_writes_nothing(make_context, tenant):
    """A turn is checked whole first: a pin of a type the tenant defined otherwise, or an episode key another
    user's turn used, stores no episode and creates no session (the session would then belong to whoever sent
    the refused turn)."""
    ctx = make_context()
    ctx.pins.define_key(tenant, PinKeyDef(key="tier", type="custom", value_type="integer"))
    bad_pin = say("k1", "u1", "Hi, I want a refund", pins=[
        PinUpdate(key="tier", value={"type": "order_id", "value": "A-1"})])
    with pytest.raises(InvalidInput) as err:
        ctx.append_turn(tenant, "hs1", bad_pin)
    assert err.value.field == "pins[0].value.type"
    assert ctx.sessions.find(tenant, "hs1") is None
    first = say("a", "u", "first")
    first.episodes[0].idempotency_key = "E1"
    ctx.append_turn(tenant, "ek1", first)
    with pytest.raises(InvalidInput) as err:
        ctx.append_turn(tenant, "ek3", first.model_copy(update={"user_id": "mallory"}))
    assert err.value.field == "episodes[0].idempotency_key"
    assert ctx.sessions.find(tenant, "ek3") is None                  # not claimed by mallory
    assert ctx.append_turn(tenant, "ek3", say("b", "u", "second")).episode_ids


def test_a_read_only_load_of_an_expired_session_changes_nothing(make_context, tenant):
    """An analyst's window of a session idle past its TTL shows the fresh window the next turn will start, without
    resetting the session (an analyst only reads). Real time passes here (a short TTL slept through): every assert
    comes after the sleep, so a slow machine only makes the session more expired."""
    ctx = make_context(session_ttl_s=TTL_S)
    ctx.append_turn(tenant, "ro1", say("k1", "u1", "my old question about invoices"))
    time.sleep(TTL_S + 0.3)
    before = ctx.sessions.get(tenant, "ro1")
    w = ctx.assemble(tenant, "ro1", ContextRequest(query="", budget_tokens=2000, model="gpt-4",
                                                   system_policy=POLICY), read_only=True)
    assert "old question" not in w.text and any("TTL" in n for n in w.notes)
    after = ctx.sessions.get(tenant, "ro1")
    assert (after.version, after.window_from_seq, after.window_reset_at) == \
        (before.version, before.window_from_seq, before.window_reset_at)
    assert load(ctx, tenant, "ro1").window_reset_at is not None      # an agent's load resets it


TTL_S = 3.0
LONG_TTL_S = 3600.0


def idle_past(db, tenant, sid, ttl_s):
    """Make session `sid` idle for longer than `ttl_s`: its last activity is moved back past the TTL (test-only
    raw write). A TTL slept through in real time made the asserts that the session is still live race the clock:
    an append plus a load had to finish inside the TTL, which a loaded CI machine did not always do."""
    with db.driver.session(database=db.database) as s:
        s.run("MATCH (x:Session {tenant_id: $t, id: $id}) SET x.last_active_at = $at RETURN x.id",
              t=tenant, id=sid, at=utcnow() - timedelta(seconds=ttl_s + 1)).single(strict=True)


def test_expired_session_starts_an_empty_window_and_says_so(make_context, db, tenant):
    # a TTL no test run outlasts: the session is live until idle_past makes it idle for longer than the TTL
    ctx = make_context(session_ttl_s=LONG_TTL_S)
    ctx.append_turn(tenant, "s1", say("k1", "u1", "my old question about invoices", pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "INV-1"})]))
    assert "old question" in load(ctx, tenant, "s1").text
    idle_past(db, tenant, "s1", LONG_TTL_S)
    w = load(ctx, tenant, "s1")
    assert "old question" not in w.text and w.window_reset_at is not None
    assert any("TTL" in n for n in w.notes)
    assert "INV-1" in w.text                                       # pins are explicit state: they stay
    ctx.append_turn(tenant, "s1", say("k2", "u1", "a new question about shipping", minute=5))
    w = load(ctx, tenant, "s1")
    assert "new question" in w.text and "old question" not in w.text
    idle_past(db, tenant, "s1", LONG_TTL_S)                                # expiry noticed by the append too
    assert ctx.append_turn(tenant, "s1", say("k3", "u1", "third visit", minute=9)).window_reset


def test_turn_append_is_idempotent_and_checks_pin_versions(make_context, tenant):
    ctx = make_context()
    t = say("turn-1", "u1", "refund order A-7 please", pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "A-7"})])
    first = ctx.append_turn(tenant, "s1", t)
    again = ctx.append_turn(tenant, "s1", t)
    assert again.replayed and again.episode_ids == first.episode_ids and again.pins == {"order_id": 1}
    assert len(ctx.services.graph.session_episodes(tenant, "s1")) == 1
    stale = say("turn-2", "u1", "actually it is order A-8", minute=1, pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "A-8"}, expected_version=0)])
    with pytest.raises(Conflict) as err:
        ctx.append_turn(tenant, "s1", stale)
    assert err.value.field == "pins[0].expected_version"
    # worded as a pin write's: a turn that sent no version expected a new pin (helper-found: "expected None")
    assert err.value.detail == "pin 'order_id' is at version 1; this write expected a new pin", err.value.detail
    assert len(ctx.services.graph.session_episodes(tenant, "s1")) == 1          # nothing half-written
    ok = stale.model_copy(update={"pins": [PinUpdate(key="order_id", value={"type": "order_id", "value": "A-8"},
                                                     expected_version=1)]})
    assert ctx.append_turn(tenant, "s1", ok).pins == {"order_id": 2}
    with pytest.raises(InvalidInput) as err:
        ctx.append_turn(tenant, "s1", say("turn-3", "someone-else", "hi"))
    assert err.value.field == "user_id"


class FailingRecall:
    """A recall service whose backend is down."""

    def search(self, tenant_id, req, viewer=None):
        raise Unavailable("search backend is down")


class SlowRecall:
    """A recall service that answers only after `release` is set (or 60 s); `answered` is set once it has."""

    def __init__(self):
        self.release = threading.Event()
        self.answered = threading.Event()

    def search(self, tenant_id, req, viewer=None):
        self.release.wait(60)
        self.answered.set()
        return SearchResponse(hits=[])


@pytest.mark.parametrize("kind", ["failing", "slow"])
def test_search_down_or_slow_still_gives_pins_and_tail(make_context, tenant, kind):
    recall = FailingRecall() if kind == "failing" else SlowRecall()
    # the slow search's timeout is short (it never answers in time, however slow the machine); the failing one
    # has a generous one, so that its error, not a timeout, is what the window reports on a loaded machine
    timeouts = dict(context_search_timeout_s=0.2, context_latency_budget_s=1.0) if kind == "slow" else \
        PATIENT_SEARCH
    ctx = make_context(recall=recall, **timeouts)
    try:
        ctx.append_turn(tenant, "s1", say("k1", "u1", "refund order A-10293 please", pins=[
            PinUpdate(key="order_id", value={"type": "order_id", "value": "A-10293"})]))
        started = time.monotonic()
        w = ctx.assemble(tenant, "s1", ContextRequest(query="refund status", budget_tokens=500, model="gpt-4",
                                                      system_policy=POLICY, goal="Refund the order"))
        elapsed = time.monotonic() - started
        if kind == "slow":
            assert not recall.answered.is_set()  # the window did not wait for the slow search (it is still held)
        assert elapsed < 10.0                    # nor for anything near the slow search's 60 s
        assert [d.source for d in w.degraded] == ["search"]
        assert ("timed out" if kind == "slow" else "search backend is down") in w.degraded[0].reason
        assert "order_id (order_id): A-10293" in w.text and "refund order A-10293 please" in w.text
        assert {"system", "goal", "pins", "recent"} <= set(w.tier_tokens)
    finally:
        if kind == "slow":
            recall.release.set()


def test_the_window_gives_each_pins_version_for_the_next_turn(make_context, tenant):
    """helper-found: the two-call loop could not update a pin, since the window named no version (an extra read
    each time), and an agent's new pin under a key compaction had proposed first was a bare 409."""
    from decimal import Decimal

    from graphmem.context.pins import AmountValue

    ctx = make_context()
    ctx.append_turn(tenant, "loop", say("l1", "u1", "Refund order A-1 please", pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "A-1"})]))
    ctx.pins.add_candidates(tenant, "loop", [("amount", AmountValue(value=Decimal("12.50")), None)])
    w = load(ctx, tenant, "loop")
    assert w.pin_versions == {"order_id": 1, "amount": 1}
    # the next turn updates the agent's pin at the version the window gave; its own "amount" is told of the candidate
    with pytest.raises(Conflict) as err:
        ctx.append_turn(tenant, "loop", say("l2", "u1", "It was 15 EUR", minute=1, pins=[
            PinUpdate(key="amount", value={"type": "amount", "value": "15"})]))
    assert err.value.field == "pins[0].expected_version" and "candidate" in err.value.detail
    ctx.append_turn(tenant, "loop", say("l2", "u1", "It was 15 EUR, order A-2", minute=1, pins=[
        PinUpdate(key="order_id", value={"type": "order_id", "value": "A-2"}, expected_version=w.pin_versions["order_id"]),
        PinUpdate(key="amount", value={"type": "amount", "value": "15"}, expected_version=w.pin_versions["amount"])]))
    after = {p.key: (p.version, p.status) for p in ctx.pins.list(tenant, "loop")}
    assert after == {"order_id": (2, "active"), "amount": (2, "active")}
    assert load(ctx, tenant, "loop").pin_versions == {"order_id": 2, "amount": 2}


def test_a_users_standing_instructions_are_in_the_window_after_many_compactions(make_context, tenant):
    """Found by a helper against a server compacting at 300 tokens (100 kept raw), without an LLM: after 39 turns of
    order updates the window had lost "... but never call my landline because my elderly father answers it" (the end
    of one long sentence), "Address me as Dr. Okafor." and "Only email me."; each revision of the summary keeps
    them."""
    ctx = make_context(compaction_threshold_tokens=300, compaction_keep_tokens=100)
    sid = "standing"
    ctx.append_turn(tenant, sid, say("c0", "u1", "Hi there, I have been a loyal customer of yours for more than eleven "
                                     "years and I have ordered furniture and kitchen appliances and garden tools and "
                                     "books from you over that whole time and I am generally quite happy with the "
                                     "service you provide to me and my family but never call my landline because "
                                     "my elderly father answers it"))
    ctx.append_turn(tenant, sid, say("c1", "u1", "Address me as Dr. Okafor. Only email me.", minute=1))
    for i in range(2, 41):
        ctx.append_turn(tenant, sid, TurnIn(idempotency_key=f"k{i}", user_id="u1", episodes=[TurnEpisode(
            role="tool" if i % 2 else "user", kind="tool_result" if i % 2 else "message",
            occurred_at=T0 + timedelta(minutes=i),
            content=f"Order {5000 + i} shipped, tracking number TRK{9000 + i}, amount {i}.50 EUR charged.")]))
        ctx.wait_for_compaction(tenant, sid)
    assert len(ctx.summaries.list(tenant, sid)) >= 3
    w = load(ctx, tenant, sid, budget=4000)
    summary = w.text.split("## Earlier in this session")[1]   # the raw turns come before it
    for said in ("but never call my landline because my elderly father answers it", "Address me as Dr. Okafor.",
                 "Only email me."):
        assert said in summary, (said, w.text)
