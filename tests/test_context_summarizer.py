"""The extractive summarizer (the fallback when no LLM is configured or it fails): what it keeps under pressure."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphmem.context.summarizer import ExtractiveSummarizer
from graphmem.models import Episode
from graphmem.tokens import TokenCounter

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def ep(i, role, content, kind="message"):
    return Episode(id=f"e{i}", tenant_id="t", kind=kind, content=content, occurred_at=T0, ingested_at=T0,
                   role=role, idempotency_key=f"k{i}")


def test_a_users_standing_constraint_outlives_tool_numbers():
    """Found by a helper: "Never call me on my landline" was summarised away while tool status lines full of
    numbers stayed. A user's constraint or preference outranks them; the tool lines fill what room is left."""
    turns = [ep(0, "user", "Hi there, quick thing before we start. Never call me on my landline, email only please.")]
    turns += [ep(i, "tool", f"status: parcel {1000 + i} at hub {i}, eta {i} days, weight {i * 3} kg",
                 kind="tool_result") for i in range(1, 12)]
    turns += [ep(12, "user", "I prefer morning deliveries, before 10 am.")]
    summary = ExtractiveSummarizer(TokenCounter.for_model("gpt-4")).summarize("t", None, turns, max_tokens=80).text
    assert "Never call me on my landline" in summary and "I prefer morning deliveries" in summary, summary
    assert "status: parcel" in summary   # the rest of the room still goes to the numbers


def test_a_constraint_survives_every_revision_and_short_ones_are_kept():
    """Found by a helper: revision 1 kept "Never call me on my landline" but revision 3 lost it (lines of the previous
    summary were scored as nobody's), and "Email only, please." or "Don’t text me." (a curly apostrophe) were dropped
    as chatter at the first compaction."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    text = None
    turns = [ep(0, "user", "Never call me on my landline."), ep(1, "user", "Email only, please."),
             ep(2, "user", "Don’t text me.")]
    for rev in range(4):
        turns += [ep(10 * rev + i, "tool", f"Sku {1000 + i} qty {i}. Bin {i} row {rev}.", kind="tool_result")
                  for i in range(1, 13)]
        text = summarizer.summarize("t", text, turns, max_tokens=90).text
        turns = []
        for needle in ("landline", "Email only", "Don’t text me"):
            assert needle in text, (rev, needle, text)


def test_a_withdrawn_constraint_keeps_its_withdrawal_beside_it():
    """Found by a helper: "Update: you can call my landline again" was dropped while the constraint it withdrew
    stayed, so the window still forbade the landline."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    first = summarizer.summarize("t", None, [ep(0, "user", "Never call me on my landline.")] + [
        ep(i, "tool", f"Sku {1000 + i} qty {i}. Bin {i}.", kind="tool_result") for i in range(1, 10)], 80).text
    later = summarizer.summarize("t", first, [ep(20, "user", "Update: you can call my landline again.")] + [
        ep(20 + i, "tool", f"Sku {2000 + i} qty {i}. Bin {i}.", kind="tool_result") for i in range(1, 10)], 80).text
    assert "landline again" in later and "Never call me on my landline" in later, later


def test_a_late_request_gets_into_a_full_summary_and_later_turns_are_covered():
    """Helper-found: with no LLM, 90 turns about refunds filled the 600-token summary, and the user's later "Please
    cancel order 7777 ..." never got in (lines of earlier revisions score +2), nor did anything after it, though
    each revision said it covered those turns. A user's request scores as a constraint does, and the turns a
    revision newly covers get up to a third of its room before the best of everything fills the rest."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    refund = "Order {n} needs a refund because item {n} arrived damaged; the customer wants it approved before Friday."
    text, n = None, 0
    for rev in range(3):     # the summary fills with refund lines
        turns = [ep(n + i, "user" if i % 2 == 0 else "assistant", refund.format(n=1000 + n + i)) for i in range(30)]
        text, n = summarizer.summarize("t", text, turns, max_tokens=600).text, n + 30
    assert "Order 1000 " in text and "Order 1089" not in text
    turns = [ep(n + i, "user" if i % 2 == 0 else "assistant", refund.format(n=1000 + n + i)) for i in range(10)]
    turns += [ep(200, "user", "Please cancel order 7777 and ship the replacement to 12 Elm Street.")]
    text = summarizer.summarize("t", text, turns, max_tokens=600).text
    assert "cancel order 7777" in text, text
    ship = "Checking order {n}: the warehouse confirmed item {n} will ship from the depot on Monday as requested."
    for rev in range(4):     # many later turns of the same weight: the request stays, and each revision shows them
        turns = [ep(300 + 30 * rev + i, "user" if i % 2 else "assistant", ship.format(n=2000 + 30 * rev + i))
                 for i in range(30)]
        text = summarizer.summarize("t", text, turns, max_tokens=600).text
        assert "cancel order 7777" in text, (rev, text)
        assert f"Checking order {2000 + 30 * rev + 1}:" in text, (rev, text)
        assert TokenCounter.for_model("gpt-4").count(text) <= 600


def test_numbered_requests_do_not_push_out_a_standing_constraint():
    """Helper-found: a user's numbered requests ("Could you look up shipment 1012?", numbers +3 on top of a request)
    outscored "Never call me on my landline" and, revision after revision, filled the summary until the constraint
    was gone. Standing constraints get the first third of the room; the turns newly folded get the next."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    text = summarizer.summarize("t", None, [ep(0, "user", "Never call me on my landline.")], max_tokens=120).text
    for rev in range(4):
        turns = [ep(10 + 22 * rev + i, "user", f"Could you look up shipment {1000 + 22 * rev + i} for me?")
                 for i in range(22)]
        text = summarizer.summarize("t", text, turns, max_tokens=120).text
        assert "Never call me on my landline" in text, (rev, text)
        assert f"shipment {1000 + 22 * rev}" in text or f"shipment {1021 + 22 * rev}" in text, (rev, text)
        assert TokenCounter.for_model("gpt-4").count(text) <= 120


def test_a_support_chat_keeps_the_constraint_and_the_decisions_of_every_stretch():
    """Helper-found: "I don't know the tracking number for order 5001", "I can't see the refund ...", "I only
    received 2 of the 3 items ..." counted as standing constraints and, with their numbers, pushed "Never call me on
    my landline" out of a 600-token summary by the third revision, and every refund approval and escalation of
    the turns each revision newly covered went too."""
    counter = TokenCounter.for_model("gpt-4")
    summarizer = ExtractiveSummarizer(counter)
    user = ["I don't know the tracking number for order {o}.", "I only received 2 of the 3 items in order {o}.",
            "I can't see the refund for order {o} in my bank yet.", "I don't have the invoice for order {o}."]
    assistant = ["Refund of €{a}.00 for order {o} approved under approval APR-{o}.",
                 "I escalated order {o} to the warehouse manager."]
    text = summarizer.summarize("t", None, [ep(0, "user", "Hi. Never call me on my landline, I only use email.")],
                                600).text
    n = 1
    for rev in range(5):
        turns, decided = [], []
        for _ in range(12):
            o, n = 5000 + n, n + 2
            turns += [ep(n - 1, "user", user[n % 4].format(o=o)),
                      ep(n, "assistant", assistant[n % 4 // 2].format(o=o, a=10 + n))]
            decided.append(str(o))
        text = summarizer.summarize("t", text, turns, 600).text
        assert "Never call me on my landline" in text and counter.count(text) <= 600, (rev, text)
        kept = [line for line in text.splitlines() if line.startswith("- assistant:")]
        assert any(o in line for line in kept for o in decided), (rev, text)


def test_the_users_words_under_any_role_name_are_the_users():
    """Helper-found: only the role "user" counted as the user's, so with "human" (LangChain), "User" or no role
    the numbered requests pushed the constraint out at once."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    for role in ("human", "User", None):
        text = summarizer.summarize("t", None, [ep(0, role, "Never call me on my landline.")], 120).text
        for rev in range(3):
            turns = [ep(10 + 22 * rev + i, role, f"Could you look up shipment {1000 + 22 * rev + i} for me?")
                     for i in range(22)]
            text = summarizer.summarize("t", text, turns, 120).text
            assert "Never call me on my landline" in text, (role, rev, text)


def test_a_sentence_repeated_in_a_later_compaction_is_kept_once():
    """Helper-found: a sentence said again after a revision was compared without the "user: " its summary line
    starts with, so the summary held it twice from then on."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    turns = [ep(0, "user", "Never call me on my landline."),
             ep(1, "tool", "status: parcel 1001 at hub 3, eta 2 days", kind="tool_result")]
    first = summarizer.summarize("t", None, turns, 600).text
    second = summarizer.summarize("t", first, [ep(2, "user", "Never call me on my landline."),
                                               ep(3, "tool", "status: parcel 1001 at hub 3, eta 2 days",
                                                  kind="tool_result")], 600).text
    assert second.count("Never call me on my landline") == 1 and second.count("parcel 1001") == 1, second


def test_the_withdrawal_of_a_constraint_outlives_the_constraint_in_a_small_summary():
    """Helper-found: at 45 tokens, "I changed my mind, you can call my landline again" was dropped while the
    "Never call me on my landline" it withdrew stayed (ties among constraints went to the earlier line, and lines of
    the previous summary score +2). Constraints are kept newest first."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4o-mini"))
    text = summarizer.summarize("t", None, [ep(0, "user", "Never call me on my landline, email only."),
                                            ep(1, "assistant", "Noted, I will only email you about order 5001.")],
                                45).text
    text = summarizer.summarize("t", text, [
        ep(2, "user", "I changed my mind, you can call my landline again."),
        ep(3, "tool", "Order 5002 refund of 40 EUR approved, ticket 8812 escalated to manager 77.",
           kind="tool_result")], 45).text
    assert "call my landline again" in text, text


def test_a_withdrawal_in_other_words_outlives_the_constraint():
    """Helper-found: "Actually, calling my landline is fine now, I lost my mobile" was not read as a constraint, so
    the latest one kept was the "Never call me on my landline" it withdrew."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4"))
    text = summarizer.summarize("t", None, [ep(0, "user", "Never call me on my landline, text me instead.")], 60).text
    text = summarizer.summarize("t", text, [
        ep(1, "user", "Actually, calling my landline is fine now, I lost my mobile."),
        ep(2, "tool", "Order 5002 refund of 40 EUR approved, ticket 8812 escalated to manager 77.",
           kind="tool_result")], 60).text
    assert "calling my landline is fine now" in text, text


def compacted(summarizer, turns, threshold=300, keep=100, max_tokens=600):
    """The summary revisions a session of `turns` gets, compacted as the server does: after each turn whose raw
    tail passes `threshold` tokens, every turn but the newest `keep` tokens of them (the newest one always) is
    folded into a new revision, and once more at the end (a forced compaction)."""
    count, tail, revisions = summarizer.counter.count, [], []

    def fold():
        kept, n = 0, 0
        for e in reversed(tail):
            if n and kept + count(e.content) > keep:
                break
            kept, n = kept + count(e.content), n + 1
        if len(tail) > n:
            revisions.append(summarizer.summarize("t", revisions[-1] if revisions else None, tail[:-n],
                                                  max_tokens).text)
            del tail[:-n]
    for e in turns:
        tail.append(e)
        if sum(count(t.content) for t in tail) > threshold:
            fold()
    fold()
    return revisions


LOYAL = ("Hi there, I have been a loyal customer of your company for more than eleven years now and I have ordered "
         "many things from you over that whole time including furniture and kitchen appliances and garden tools and "
         "books and I am generally quite happy with the service that you provide to me and my family but never call "
         "my landline because my elderly father answers it")


def test_a_constraint_at_the_end_of_a_long_sentence_is_kept_in_every_revision():
    """Found by a helper: a user's "... but never call my landline because my elderly father answers it" at the end
    of one long sentence without a full stop was cut to its first 60 tokens, the constraint's words gone, and from
    the third revision the cut line, no longer a constraint, was dropped. A constraint's line is cut to the words
    around its cue, an ellipsis where words were left out, and said again later it is kept once."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4o-mini"))
    turns = [ep(0, "user", LOYAL)] + [
        ep(i, "assistant" if i % 2 else "user",
           f"Turn {i}: the tracking update for parcel {1000 + i} says it is in transit to the depot number {i}.")
        for i in range(1, 30)]
    revisions = compacted(summarizer, turns)
    assert len(revisions) >= 4, revisions
    for rev, text in enumerate(revisions):
        line = next((x for x in text.splitlines() if "landline" in x), None)
        assert line and line.startswith("- user: ... ") and \
            line.endswith("but never call my landline because my elderly father answers it"), (rev, text)
        assert summarizer.counter.count(line + "\n") <= 60, line
    again = summarizer.summarize("t", revisions[-1], [ep(40, "user", LOYAL)], 600).text
    assert again.count("never call my landline") == 1, again


@pytest.mark.parametrize("instruction", [
    "Only email me.", "Address me as Dr. Okafor.", "Keep all replies in French.", "My budget is capped, no upsells.",
    "Email only, please.", "Never call my landline.", "Do not ship to my office.", "Text me instead of calling.",
    "I'm allergic to peanuts.", "Use metric units from now on."])
def test_a_standing_instruction_in_ordinary_words_outlives_39_turns_of_orders(instruction):
    """Found by a helper (compaction at 300 tokens, 100 kept raw): "Only email me." (under 4 words) was dropped as
    chatter, "Address me as Dr. Okafor." was split at "Dr." into two fragments, both dropped, and "Keep all replies
    in French." and "My budget is capped, no upsells." were kept at the first revision but not recognised as
    constraints, and lost from the third on, under lines of order numbers and amounts."""
    summarizer = ExtractiveSummarizer(TokenCounter.for_model("gpt-4o-mini"))
    turns = [ep(0, "user", instruction)] + [
        ep(i, "tool" if i % 2 else "user",
           f"Order {5000 + i} shipped, tracking number TRK{9000 + i}, amount {i}.50 EUR charged.",
           kind="tool_result" if i % 2 else "message") for i in range(1, 40)]
    revisions = compacted(summarizer, turns)
    assert len(revisions) >= 4, revisions
    for rev, text in enumerate(revisions):
        assert f"- user: {instruction}\n" in text + "\n", (rev, text)


@pytest.mark.parametrize("statement", [
    "I keep getting the wrong parcel for order {o}.", "Only 2 of the 3 items in order {o} arrived.",
    "Nobody would call me back about order {o}.", "Please call me back about order {o}.",
    "Our budget meeting about order {o} moved to Friday.", "I checked the tracking page of order {o}, no luck.",
    "The address on order {o} is my office.", "It was sent only to me, order {o}."])
def test_plain_statements_in_the_words_of_instructions_do_not_push_out_a_constraint(statement):
    """The words that make "Keep all replies in French", "Only email me", "Call me Sam", "My budget is capped" or
    "no upsells" a standing instruction also make plain statements ("I keep getting ...", "Only 2 of the 3 items
    ...", "Nobody would call me back ...", "Our budget meeting ...", "..., no luck."); read as constraints, with their
    order numbers, they would fill the constraints' third of the summary and push out the real one."""
    counter = TokenCounter.for_model("gpt-4")
    summarizer = ExtractiveSummarizer(counter)
    text = summarizer.summarize("t", None, [ep(0, "user", "Hi. Never call me on my landline, I only use email.")],
                                600).text
    n = 1
    for rev in range(5):
        turns = []
        for _ in range(12):
            o, n = 5000 + n, n + 2
            turns += [ep(n - 1, "user", statement.format(o=o)),
                      ep(n, "assistant", f"Refund of €{10 + n}.00 for order {o} approved under approval APR-{o}.")]
        text = summarizer.summarize("t", text, turns, 600).text
        assert "Never call me on my landline" in text and counter.count(text) <= 600, (rev, text)


@pytest.mark.timeout(30)   # not a speed target: a guard against quadratic matching (it took 74 s before)
def test_a_long_message_without_a_full_stop_is_summarised_in_linear_time():
    """helper-found: a 100,000-character user message of "you can ..." without a full stop took 74 s to compact,
    holding the GIL, so every other request of the server waited (the withdrawal pattern rescanned the sentence from
    each "you can"). And "no X" of a plain statement ("arrived, no box") is no constraint, while "no upsells" is."""
    text = "you can " * 12_500 + "call my landline again"
    summary = ExtractiveSummarizer(TokenCounter.for_model("gpt-4")).summarize("t", None, [ep(0, "user", text)], 200)
    assert summary.text.rstrip().endswith("call my landline again"), summary.text[-200:]
    from graphmem.context.summarizer import _CONSTRAINT
    assert _CONSTRAINT.search("The price is fine, no upsells.") and _CONSTRAINT.search("No calls please.")
    assert not _CONSTRAINT.search("Order 5512 arrived, no box.")
