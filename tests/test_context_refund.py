"""The acceptance test of seed 000: a refund thread that no longer fits in the window. Order id, amount, currency and
approval id, set early in a long session, are present and exact after five rounds of compaction, while the tail and
the summaries stay small. Plus the LLM summarizer (through the real `openai` client against the local fake server),
its fallback, rollback, and byte-stable windows."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from graphmem.context.models import ContextRequest, PinUpdate, ToolSchema, TurnEpisode, TurnIn
from tests.fake_openai import FakeOpenAIServer, Reply, chat_handler, error_body
from tests.context_fixture import PATIENT_SEARCH

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
SMALL = dict(compaction_threshold_tokens=260, compaction_keep_tokens=90, summary_max_tokens=120)
POLICY = "You are Acme's support agent. Never issue a refund without an approval id."
PINS = ["order_id (order_id): A-10293", "amount (amount): 129.99", "currency (currency): EUR",
        "approval_id (approval_id): APR-7781"]
STATUS_DUMP = ('{"refund": {"order": "A-10293", "state": "processing", "carrier": "DHL", "eta_days": 3, '
               '"history": ["created", "queued", "processing"]}}')


def turn(i, *episodes, pins=()):
    return TurnIn(idempotency_key=f"turn-{i}", user_id="u-42", agent_version="bot-2.3", prompt_version="refunds-v7",
                  tool_version="tools-5", episodes=[TurnEpisode(occurred_at=T0 + timedelta(minutes=i * 3 + j), **e)
                                                    for j, e in enumerate(episodes)], pins=list(pins))


def opening(ctx, tenant, sid):
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Hi, I need a refund for order A-10293. "
                                          "I paid 129.99 EUR and the blender arrived broken."},
                                      pins=[PinUpdate(key="order_id", value={"type": "order_id", "value": "A-10293"}),
                                            PinUpdate(key="amount", value={"type": "amount", "value": "129.99"}),
                                            PinUpdate(key="currency", value={"type": "currency", "value": "EUR"}),
                                            PinUpdate(key="goal", value={"type": "goal", "value": "Refund order A-10293",
                                                      "constraints": ["refund to the original card"]})]))
    ctx.append_turn(tenant, sid, turn(1, {"kind": "tool_result", "role": "tool", "content":
                                          "approval granted by manager Kim: approval APR-7781 for 129.99 EUR"},
                                      pins=[PinUpdate(key="approval_id", value={"type": "approval_id",
                                                                               "value": "APR-7781"}),
                                            PinUpdate(key="refund_gate", value={"type": "human_gate",
                                                      "value": "approved", "gate": "refund over 100 EUR",
                                                      "decided_by": "Kim", "approval_id": "APR-7781"})]))


def chatter(ctx, tenant, sid, i):
    return ctx.append_turn(tenant, sid, turn(
        i, {"role": "user", "content": f"Any news on my refund? This is my message number {i}, thanks a lot."},
        {"kind": "tool_result", "role": "tool", "content": STATUS_DUMP},
        {"role": "assistant", "content": f"Your refund is still processing (check {i}); it should arrive within "
                                         f"three business days. I will keep an eye on it."}))


def first_summary(ctx, tenant, sid):
    """The opening turn, then chatter until the first compaction has written a summary; returns that summary."""
    opening(ctx, tenant, sid)
    i = 2
    while not ctx.summaries.list(tenant, sid):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
        i += 1
    return ctx.summaries.current(tenant, sid)


def window(ctx, tenant, sid, budget=700, query=""):
    return ctx.assemble(tenant, sid, ContextRequest(
        query=query, budget_tokens=budget, model="gpt-4", system_policy=POLICY, goal="Refund order A-10293",
        tools=[ToolSchema(name="issue_refund", description="refund an order to the original card",
                          parameters={"type": "object", "properties": {"order_id": {"type": "string"}}})]))


def test_refund_pins_survive_five_rounds_of_compaction(make_context, tenant):
    ctx = make_context(**SMALL)
    sid = "refund-thread"
    opening(ctx, tenant, sid)
    pins_before = {p.key: (p.version, p.value) for p in ctx.pins.list(tenant, sid)}
    revs, i, history_tokens, window_history = [], 2, [], []
    while len(revs) < 5:
        assert i < 60, "compaction never ran five times"
        result = chatter(ctx, tenant, sid, i)
        i += 1
        if not result.compaction_scheduled:
            continue
        done = ctx.wait_for_compaction(tenant, sid)
        assert done and done.summary, done
        revs.append(done.summary)
        w = window(ctx, tenant, sid)
        # pins: present, exact, untouched by compaction
        for line in PINS:
            assert f"- {line}\n" in w.text
        assert {p.key: (p.version, p.value) for p in ctx.pins.list(tenant, sid, status="active")} == pins_before
        # the summary is the current revision, marked generated, below the pins and the tail
        assert w.summary_rev == done.summary.rev == len(revs)
        assert w.text.index("## Pinned facts") < w.text.index("## Recent turns") < w.text.index("## Earlier in")
        assert "lower trust" in w.text
        # the tail and the summary stay small while the history grows
        assert ctx.compactor.tail_tokens(tenant, sid) <= SMALL["compaction_threshold_tokens"]
        assert done.summary.tokens <= SMALL["summary_max_tokens"] < done.summary.source_tokens
        history = sum(e.token_count for e in ctx.services.graph.session_episodes(tenant, sid, limit=1000))
        history_tokens.append(history)
        window_history.append(w.tier_tokens.get("recent", 0) + w.tier_tokens.get("summaries", 0))
        # bounded: the raw tail under the threshold, one summary, headings and unconfirmed candidates
        assert window_history[-1] <= SMALL["compaction_threshold_tokens"] + SMALL["summary_max_tokens"] + 100
    assert [s.rev for s in revs] == [1, 2, 3, 4, 5]
    assert history_tokens[-1] > 3 * history_tokens[0]
    assert window_history[-1] < history_tokens[-1] / 2          # resending the history would cost > twice as much
    # raw episodes stay: every turn is still stored
    assert len(ctx.services.graph.session_episodes(tenant, sid, limit=1000)) == 2 + 3 * (i - 2)
    # lineage: each revision revises the previous one; all are kept
    listed = ctx.summaries.list(tenant, sid)
    assert [s.rev for s in listed] == [5, 4, 3, 2, 1] and all(s.status == "active" for s in listed)
    # the pin candidates compaction wrote never replaced a pin
    cands = ctx.pins.list(tenant, sid, status="candidate")
    assert all(c.key not in pins_before for c in cands)
    # episodes carry the agent, prompt and tool versions
    ep = ctx.services.graph.session_episodes(tenant, sid, limit=1)[0]
    assert (ep.agent_version, ep.prompt_version, ep.tool_version) == ("bot-2.3", "refunds-v7", "tools-5")



def test_a_tool_result_longer_than_the_kept_tail_stays_raw(make_context, tenant):
    """One tool result larger than the threshold arrives: compaction folds the turns before it into the summary,
    but the agent still gets the tool output verbatim (it was summarized away at once)."""
    ctx = make_context(**SMALL)
    sid = "big-tool"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Please list my open orders."}))
    dump = "\n".join(f"line {k}: item sku-{k} qty {k % 7} price {k * 3}.99 EUR status shipped" for k in range(30))
    r = ctx.append_turn(tenant, sid, turn(1, {"kind": "tool_result", "role": "tool", "content": dump}))
    assert r.compaction_scheduled
    done = ctx.wait_for_compaction(tenant, sid)
    assert done and done.summary and done.compacted_episodes == 1, done
    w = window(ctx, tenant, sid, budget=4000)
    assert dump in w.text and w.tier_tokens.get("recent", 0) > SMALL["compaction_threshold_tokens"]


def test_compaction_covers_the_oldest_turns_while_turns_keep_arriving(make_context, tenant):
    """Turns sent back to back while compaction runs: every summary covers the oldest turns, so the raw tail is
    always the newest episodes of the session (a turn committed between two reads once pushed the oldest raw
    episode out of the compaction's view, and it stayed raw under the newer summarized ones)."""
    ctx = make_context(**SMALL)
    sid = "rapid"
    for i in range(14):
        chatter(ctx, tenant, sid, i)
    ctx.wait_for_compaction(tenant, sid)
    episodes = ctx.services.graph.session_episodes(tenant, sid, limit=1000)     # oldest first
    raw = {e.id for e in ctx.compactor.raw_tail(tenant, sid)}
    assert ctx.summaries.current(tenant, sid) is not None and raw
    assert [e.id for e in episodes][-len(raw):] == [e.id for e in episodes if e.id in raw]


def test_a_tail_longer_than_a_window_reads_is_reported_and_compacted(make_context, tenant):
    """Many short turns stay under the token threshold but past the episodes a window reads: the window says
    how many it left out, and the next turn compacts them instead of leaving them out silently."""
    from graphmem.models import EpisodeIn
    ctx = make_context(context_tail_max_episodes=10, **SMALL)
    sid = "many-short"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "msg 0"}))
    ctx.services.ingest.append_episodes(tenant, [EpisodeIn(content=f"msg {k}", session_id=sid, user_id="u-42",
                                                           occurred_at=T0 + timedelta(seconds=k)) for k in range(1, 14)])
    w = window(ctx, tenant, sid, budget=4000)
    assert "msg 13" in w.text and "msg 3\n" not in w.text
    assert any(n.startswith("4 older raw turn(s) not loaded") for n in w.notes), w.notes
    r = ctx.append_turn(tenant, sid, turn(9, {"role": "user", "content": "msg 14"}))
    assert r.compaction_scheduled
    done = ctx.wait_for_compaction(tenant, sid)
    assert done.summary and "episodes >" in done.reason, done
    w = window(ctx, tenant, sid, budget=4000)
    assert not any("not loaded" in n for n in w.notes) and w.summary_rev == 1 and "msg 14" in w.text

def test_rollback_restores_the_previous_revision_and_its_turns(make_context, tenant):
    ctx = make_context(**SMALL)
    sid = "rollback"
    opening(ctx, tenant, sid)
    i = 2
    while len(ctx.summaries.list(tenant, sid)) < 2:
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
        i += 1
    tail_before = ctx.compactor.tail_tokens(tenant, sid)
    current = ctx.summaries.rollback(tenant, sid)
    assert current.rev == 1
    assert ctx.compactor.tail_tokens(tenant, sid) > tail_before          # rev 2's turns are raw again
    assert [(s.rev, s.status) for s in ctx.summaries.list(tenant, sid)] == [(2, "rolled_back"), (1, "active")]
    assert window(ctx, tenant, sid, budget=4000).summary_rev == 1
    nxt = ctx.compact_now(tenant, sid, force=True)
    assert nxt.summary.rev == 3                                            # a new revision, rev 2 kept


def test_window_is_byte_stable_for_the_same_state(make_context, tenant):
    # generous search timeout: a search that times out on a busy machine is (rightly) a different window
    ctx = make_context(**PATIENT_SEARCH, **SMALL)
    sid = "stable"
    opening(ctx, tenant, sid)
    for i in range(2, 6):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    first = window(ctx, tenant, sid, query="refund A-10293").model_dump_json()
    second = window(ctx, tenant, sid, query="refund A-10293").model_dump_json()
    if first != second:
        a, b = json.loads(first), json.loads(second)
        assert {k: v for k, v in a.items() if a[k] != b[k]} == {k: v for k, v in b.items() if a[k] != b[k]}
    assert first.encode() == second.encode()


def _summary_llm(text):
    def reply_for(messages):
        return text
    return reply_for


def test_llm_summarizer_is_used_and_cannot_change_pins(make_context, tenant):
    with FakeOpenAIServer() as srv:
        # a summary that "remembers" the wrong order and amount: pins must not follow it
        srv.set_default("/v1/chat/completions", chat_handler(_summary_llm(
            "- The user wants a refund for order A-99999 of 9999.00 USD.")))
        ctx = make_context(llm_base_url=srv.base_url, llm_api_key="test", llm_model="fake-summarizer",
                           llm_max_retries=0, **SMALL)
        sid = "llm"
        summary = first_summary(ctx, tenant, sid)
        assert summary.model == "fake-summarizer" and summary.fallback_reason is None
        assert "A-99999" in summary.text
        sent = srv.requests_for("/v1/chat/completions")[0].json()
        assert "Identifiers, amounts, currencies" in sent["messages"][0]["content"]      # summarize_v1.md
        assert "A-10293" in sent["messages"][1]["content"]
        w = window(ctx, tenant, sid)
        for line in PINS:
            assert f"- {line}\n" in w.text
        assert w.text.index("order_id (order_id): A-10293") < w.text.index("A-99999")   # pins outrank prose


def test_llm_failure_falls_back_to_the_extractive_summary(make_context, tenant):
    with FakeOpenAIServer() as srv:
        srv.set_default("/v1/chat/completions", lambda req: Reply(500, error_body("model overloaded")))
        ctx = make_context(llm_base_url=srv.base_url, llm_api_key="test", llm_max_retries=0, **SMALL)
        sid = "fallback"
        summary = first_summary(ctx, tenant, sid)
        assert summary.model == "extractive-v1" and "llm failed" in summary.fallback_reason
        assert "A-10293" in summary.text and srv.requests_for("/v1/chat/completions")


def test_a_backdated_last_turn_stays_raw_through_compaction(make_context, tenant):
    """Found by a helper: a turn stamped an hour before the turns already sent (an event the agent learned of
    late) sorted to the front of the raw tail and was summarised away by the compaction its own append
    triggered, before any window showed it. The episodes that arrived last stay raw, wherever they sort."""
    ctx = make_context(**SMALL)
    sid = "backdated"
    for i in range(2, 8):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    late = TurnIn(idempotency_key="late", user_id="u-42", episodes=[
        TurnEpisode(kind="event", content="Carrier note: parcel P-5521 was returned to the depot.",
                    occurred_at=T0 - timedelta(hours=1)),
        TurnEpisode(kind="tool_result", content="depot scan: P-5521 shelf 4", occurred_at=T0 - timedelta(minutes=59))])
    ctx.append_turn(tenant, sid, late)
    done = ctx.compact_now(tenant, sid, force=True)
    assert done.summary is not None, done
    raw = {e.id for e in ctx.compactor.raw_tail(tenant, sid)}        # both episodes of the turn (helper-found)
    late_ids = {e.id for e in ctx.services.graph.session_episodes(tenant, sid) if "P-5521" in e.content}
    assert len(late_ids) == 2 and late_ids <= raw
    text = window(ctx, tenant, sid, budget=4000).text
    assert "parcel P-5521 was returned" in text and "shelf 4" in text
    # once folded, the summary's span runs from the earliest turn to the latest (it read backwards)
    ctx.append_turn(tenant, sid, turn(40, {"role": "user", "content": "Thanks, and the refund?"}))
    folded = ctx.compact_now(tenant, sid, force=True).summary
    assert folded.covers_from_at == T0 - timedelta(hours=1) and folded.covers_from_at < folded.covers_to_at


def test_compaction_never_proposes_a_deleted_pin_or_a_gates_approval_again(make_context, db, tenant):
    """Found by a helper: the agent deleted its `order_id` pin (the order was cancelled), and the next compaction
    read "order A-10293" in the old turns and proposed it again as a candidate; an approval held by a human gate
    pin was proposed again as an `approval_id` candidate. Neither comes back. Erasing the session's episodes makes
    it forget the deleted values (they may be the erased words)."""
    ctx = make_context(**SMALL)
    sid = "dismissed"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Refund order A-10293 please."},
                                      pins=[PinUpdate(key="order_id", value={"type": "order_id", "value": "A-10293"})]))
    ctx.append_turn(tenant, sid, turn(1, {"kind": "tool_result", "role": "tool",
                                          "content": "manager Kim granted approval APR-7781"},
                                      pins=[PinUpdate(key="refund_gate", value={
                                          "type": "human_gate", "value": "approved", "gate": "refund over 100 EUR",
                                          "approval_id": "APR-7781"})]))
    ctx.pins.delete(tenant, sid, "order_id", expected_version=1)
    for i in range(2, 8):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    assert ctx.summaries.current(tenant, sid) is not None
    pins = {p.key: p for p in ctx.pins.list(tenant, sid)}
    assert "order_id" not in pins and "approval_id" not in pins, pins
    assert set(pins) >= {"refund_gate"}
    first = ctx.services.graph.session_episodes(tenant, sid, limit=1)[0]
    ctx.services.governance.forget(tenant, episode_id=first.id)
    from tests.test_governance_support import raw
    assert raw(db, "MATCH (s:Session {tenant_id: $t, id: $s}) RETURN s.dismissed_pins AS d", t=tenant, s=sid) == [
        {"d": None}]


def test_an_unrelated_erasure_keeps_a_deleted_pin_deleted(make_context, db, tenant):
    """Found by a helper: any erasure in a session wiped every value deleted from its pins (`dismissed_pins`), so
    after forgetting a turn about the user's cat, the next compaction proposed the deleted order id again. An
    erasure forgets only the dismissals whose value its own text holds."""
    ctx = make_context(**SMALL)
    sid = "dismissed"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Refund order A-10293 please."},
                                      pins=[PinUpdate(key="order_id", value={"type": "order_id", "value": "A-10293"})]))
    ctx.pins.delete(tenant, sid, "order_id", expected_version=1)
    ctx.append_turn(tenant, sid, turn(1, {"role": "user", "content": "By the way, my cat is called Mirko."}))
    mirko = [e for e in ctx.services.graph.session_episodes(tenant, sid) if "Mirko" in e.content]
    assert len(mirko) == 1
    ctx.services.governance.forget(tenant, episode_id=mirko[0].id)     # no order id in it
    from tests.test_governance_support import raw
    assert raw(db, "MATCH (s:Session {tenant_id: $t, id: $s}) RETURN s.dismissed_pins AS d", t=tenant, s=sid) == [
        {"d": ["order_id:a10293"]}]
    for i in range(2, 8):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    assert ctx.summaries.current(tenant, sid) is not None
    pins = {p.key: (p.status, p.value) for p in ctx.pins.list(tenant, sid)}
    assert "order_id" not in pins, pins


def test_erasing_a_turn_forgets_the_dismissals_its_words_hold_and_no_other(make_context, db, tenant):
    """The dismissals an erasure forgets are those whose value its text holds, however it is spelled there (an
    order id by its letters and digits, case-blind; an amount as a number): "ORDER a10293" holds the deleted
    A-10293, "$1,299.00" the deleted 1299; the deleted approval of another turn stays deleted until that turn goes."""
    from tests.test_governance_support import raw
    ctx = make_context(**SMALL)
    sid = "dismissed-some"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Refund ORDER a10293, I paid $1,299.00."},
                                      pins=[PinUpdate(key="order_id", value={"type": "order_id", "value": "A-10293"}),
                                            PinUpdate(key="amount", value={"type": "amount", "value": "1299"})]))
    ctx.append_turn(tenant, sid, turn(1, {"kind": "tool_result", "role": "tool",
                                          "content": "manager Kim granted approval APR-7781"},
                                      pins=[PinUpdate(key="approval_id", value={"type": "approval_id",
                                                                               "value": "APR-7781"})]))
    for key in ("order_id", "amount", "approval_id"):
        ctx.pins.delete(tenant, sid, key, expected_version=1)

    def dismissed():
        return raw(db, "MATCH (s:Session {tenant_id: $t, id: $s}) RETURN s.dismissed_pins AS d",
                   t=tenant, s=sid)[0]["d"]
    assert sorted(dismissed()) == ["amount:1299", "approval_id:apr7781", "order_id:a10293"]
    first, second = ctx.services.graph.session_episodes(tenant, sid)[:2]
    assert "a10293" in first.content and "APR-7781" in second.content
    ctx.services.governance.forget(tenant, episode_id=first.id)
    assert dismissed() == ["approval_id:apr7781"]
    ctx.services.governance.forget(tenant, episode_id=second.id)
    assert dismissed() is None


def test_dismissed_values_are_found_in_a_text_as_candidates_are():
    """`dismissed_in`: the dismissals ("<value_type>:<value>", `graphmem.context.pins.value_keys`) whose value a
    text holds, as compaction would read it or case-blind as it is written."""
    from graphmem.context.compaction import dismissed_in
    dismissed = ["order_id:a10293", "approval_id:apr7781", "amount:1299", "amount:129.99", "currency:EUR",
                 "obligation:the user asked to cancel the order", "goal:Refund order A-10293",
                 "human_gate:approved", "idempotency_key:refund-A-10293-1", "custom:gold"]
    assert dismissed_in(["nothing of the sort"], dismissed) == set()
    assert dismissed_in(["Order #A 10293 and APPROVAL apr-7781"], dismissed) == {
        "order_id:a10293", "approval_id:apr7781"}
    assert dismissed_in(["it was €1.299,00", "and 129.990 EUR"], dismissed) == {
        "amount:1299", "amount:129.99", "currency:EUR"}
    assert dismissed_in(["The user asked to  CANCEL the order."], dismissed) == {
        "obligation:the user asked to cancel the order"}
    assert dismissed_in(["goal: refund order a-10293; Approved by Kim; idempotency key REFUND-A-10293-1; Gold"],
                        dismissed) == {"goal:Refund order A-10293", "human_gate:approved", "order_id:a10293",
                                       "idempotency_key:refund-A-10293-1", "custom:gold"}
    assert dismissed_in([], dismissed) == set()


def test_a_deleted_gate_or_amount_is_not_proposed_again_in_another_spelling(make_context, tenant):
    """Found by a helper: deleting a human-gate pin let compaction propose its approval id as a new candidate, and
    a deleted amount "1299.00" came back as "1299" when a later turn wrote "$1,299"."""
    ctx = make_context(**SMALL)
    sid = "respelled"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "The blender cost $1,299.00 in the end."},
                                      pins=[PinUpdate(key="amount", value={"type": "amount", "value": "1299.00"}),
                                            PinUpdate(key="gate", value={
                                                "type": "human_gate", "value": "approved", "gate": "refund",
                                                "approval_id": "APR-9911"})]))
    ctx.pins.delete(tenant, sid, "amount", expected_version=1)
    ctx.pins.delete(tenant, sid, "gate", expected_version=1)
    ctx.append_turn(tenant, sid, turn(1, {"kind": "tool_result", "role": "tool",
                                          "content": "approval APR-9911 recorded; charged $1,299 to the card"}))
    for i in range(2, 8):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    assert len(ctx.summaries.list(tenant, sid)) >= 1
    pins = {p.key: p.value.primary() for p in ctx.pins.list(tenant, sid)}
    assert "amount" not in pins and "approval_id" not in pins, pins


def test_compaction_proposes_no_candidate_the_tenants_key_definition_refuses(make_context, tenant):
    """Found by a helper: with `order_id` defined by the tenant as custom/string, compaction proposed an `order_id`
    candidate of type order_id, which could never be confirmed (422) and blocked re-saving the definition (409)."""
    from graphmem.context.pins import PinKeyDef
    ctx = make_context(**SMALL)
    ctx.pins.define_key(tenant, PinKeyDef(key="order_id", type="custom", value_type="string"))
    sid = "defined"
    ctx.append_turn(tenant, sid, turn(0, {"role": "user", "content": "Refund order A-10293, I paid 129.99 EUR."}))
    for i in range(1, 7):
        chatter(ctx, tenant, sid, i)
        ctx.wait_for_compaction(tenant, sid)
    pins = {p.key: p for p in ctx.pins.list(tenant, sid)}
    assert "order_id" not in pins and pins["amount"].status == "candidate", pins
    ctx.pins.define_key(tenant, PinKeyDef(key="order_id", type="custom", value_type="string", description="ours"))
