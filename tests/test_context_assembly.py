"""The tier walk (graphmem/context/assembly.py): budget, tier order, no stealing, refusal, routing, citations.
Property-based with hypothesis; token counts are real tiktoken counts."""
from __future__ import annotations

from datetime import datetime, timezone
from types import SimpleNamespace

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from graphmem.context import assembly
from graphmem.context.assembly import TIERS, Candidate, fit
from graphmem.errors import InvalidInput
from graphmem.tokens import TokenCounter

COUNTER = TokenCounter.for_model("gpt-4")
text_st = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=300).filter(
    lambda s: s.strip())
LATER = TIERS[1:]


@st.composite
def windows(draw):
    cands = {"system": [Candidate("system", "system", draw(text_st))]}
    for tier in LATER:
        n = draw(st.integers(0, 5))
        cands[tier] = [Candidate(tier, f"{tier}:{i}", draw(text_st), order=(draw(st.integers(0, 9)), i),
                                 min_tokens=draw(st.sampled_from([0, 0, 10])) if tier == "documents" else 0)
                       for i in range(n)]
    return cands, draw(st.integers(1, 600))


def _system_alone(cands) -> int:
    return COUNTER.count(assembly.HEADERS["system"]) + COUNTER.count(cands["system"][0].text.strip() + "\n")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows())
def test_window_never_exceeds_budget_and_keeps_tier_order(case):
    cands, budget = case
    if _system_alone(cands) > budget:
        with pytest.raises(InvalidInput) as err:
            fit(cands, budget, COUNTER)
        assert err.value.field == "budget_tokens"
        return
    out = fit(cands, budget, COUNTER)
    assert COUNTER.count(out.text) <= budget
    assert out.total_tokens == COUNTER.count(out.text)
    # the system policy is never dropped when it fits alone, and it comes first
    assert out.pieces[0].tier == "system" and out.text.startswith(assembly.HEADERS["system"])
    assert all(d.tier != "system" for d in out.dropped)
    # tier order always holds, in the pieces and in the text
    ranks = [TIERS.index(p.tier) for p in out.pieces]
    assert ranks == sorted(ranks)
    positions = [out.text.index(assembly.HEADERS[t]) for t in TIERS if t in out.tier_tokens]
    assert positions == sorted(positions)
    # every candidate is either placed or dropped with a reason
    placed = {p.id for p in out.pieces}
    dropped = {d.id for d in out.dropped}
    offered = {c.id for tier in TIERS for c in cands.get(tier, ())}
    assert placed | dropped == offered and not placed & dropped
    assert all(d.reason for d in out.dropped)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows())
def test_piece_counts_add_up_so_a_roomy_window_is_not_recounted(case):
    """With room to spare `fit` sums the pieces' counts instead of encoding the whole window again: the sum must be
    the exact count of the text (encoded afresh, not from the counter's memo)."""
    cands, _ = case
    out = fit(cands, 1_000_000, COUNTER)
    assert out.total_tokens == len(COUNTER.encoding.encode(out.text, disallowed_special=()))


def test_tail_turns_parse_cypher_datetime_strings():
    """window_state returns times as toString(datetime): seconds are left out when zero, fractions kept."""
    row = {"id": "e1", "kind": "message", "role": "user", "speaker": None, "content": "hi", "source": "user_explicit"}
    a = assembly.TailTurn.from_row({**row, "occurred_at": "2024-05-01T09:00Z"})
    b = assembly.TailTurn.from_row({**row, "occurred_at": "2024-05-01T09:00:07.123456789Z"})
    c = assembly.TailTurn.from_row({**row, "occurred_at": "2024-05-01T11:00:07+02:00"})
    assert assembly.episode_line(a) == "[2024-05-01T09:00:00Z] user: hi"
    assert assembly.iso(b.occurred_at) == assembly.iso(c.occurred_at) == "2024-05-01T09:00:07Z"
    assert b.occurred_at.microsecond == 123456 and c.occurred_at.utcoffset().total_seconds() == 0


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(windows(), st.integers(1, len(TIERS) - 1))
def test_later_tiers_never_take_room_from_earlier_ones(case, k):
    """What tiers[:k] place does not depend on what later tiers offer."""
    cands, budget = case
    if _system_alone(cands) > budget:
        return
    full = fit(cands, budget, COUNTER)
    prefix = fit({t: cands.get(t, []) for t in TIERS[:k]}, budget, COUNTER)
    early = [(p.id, p.text) for p in full.pieces if TIERS.index(p.tier) < k]
    assert early == [(p.id, p.text) for p in prefix.pieces]


def test_system_policy_too_large_is_refused_naming_budget():
    cands = {"system": [Candidate("system", "system", "rule " * 100)]}
    with pytest.raises(InvalidInput) as err:
        fit(cands, 50, COUNTER)
    assert err.value.field == "budget_tokens" and "system policy" in err.value.detail


def test_a_piece_that_does_not_fit_is_skipped_and_the_walk_goes_on():
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "recent": [Candidate("recent", "big", "word " * 400), Candidate("recent", "small", "ok then")],
             "documents": [Candidate("documents", "d", "a short doc")]}
    out = fit(cands, 60, COUNTER)
    assert [p.id for p in out.pieces] == ["system", "small", "d"]
    assert out.dropped[0].id == "big" and "does not fit" in out.dropped[0].reason
    # its size is the one its reason gives, tier heading included (helper-found: 33 tokens, "needs 42 tokens")
    assert f"needs {out.dropped[0].tokens} tokens" in out.dropped[0].reason, out.dropped[0]


def test_tail_is_kept_newest_first_and_rendered_oldest_first():
    from datetime import datetime, timedelta, timezone
    t0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
    eps = [SimpleNamespace(id=f"e{i}", role="user", kind="message", speaker=None, source="user_explicit",
                           content=f"message number {i} " + "blah " * 20, occurred_at=t0 + timedelta(minutes=i))
           for i in range(6)]
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "recent": assembly.tail_candidates(list(reversed(eps)))}
    out = fit(cands, 110, COUNTER)
    kept = [p.id for p in out.pieces if p.tier == "recent"]
    assert kept == ["episode:e4", "episode:e5"]          # the newest that fit, in chronological order
    assert out.text.index("message number 4") < out.text.index("message number 5")


def test_tools_are_routed_by_relevance_when_they_do_not_all_fit():
    tools = [{"name": f"tool_{n}", "description": d, "parameters": {"type": "object"}} for n, d in
             [("weather", "get the weather forecast for a city"), ("refund", "issue a refund for an order"),
              ("calendar", "book a meeting in the calendar"), ("order_status", "look up the status of an order")]]
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "tools": assembly.tool_candidates(tools, "refund my order please")}
    out = fit(cands, 55, COUNTER)
    placed = [p.id for p in out.pieces if p.tier == "tools"]
    assert placed == ["tool:tool_refund", "tool:tool_order_status"]   # rendered in the caller's order
    assert {d.id for d in out.dropped} == {"tool:tool_weather", "tool:tool_calendar"}
    assert all("routed out" in d.reason for d in out.dropped)
    everything = fit(cands, 2000, COUNTER)
    assert [p.id for p in everything.pieces if p.tier == "tools"] == [f"tool:{t['name']}" for t in tools]


def test_documents_are_cited_snippets_not_dumps():
    docs = [SimpleNamespace(id="kb-1", title="Refund policy", source="https://kb.example/refunds",
                            text="Refunds above 100 EUR need a manager approval. " * 200)]
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "documents": assembly.document_candidates(docs, COUNTER, 40)}
    out = fit(cands, 1000, COUNTER)
    doc = out.pieces[-1]
    assert doc.citations[0].kind == "document" and doc.citations[0].id == "kb-1"
    assert doc.text.startswith("- [doc kb-1] Refund policy (https://kb.example/refunds): Refunds above")
    assert doc.tokens <= 40 + 30
    assert doc.truncated and doc.text.rstrip().endswith("[...]")   # a snippet is a cut (helper-found: it said false)
    short = [SimpleNamespace(id="kb-2", title=None, source=None, text="Short.")]
    whole = fit({**cands, "documents": assembly.document_candidates(short, COUNTER, 40)}, 100, COUNTER)
    assert not whole.pieces[-1].truncated and whole.pieces[-1].id == "document:kb-2"
    small = fit(cands, 45, COUNTER)                                   # cut further to fit what is left
    assert small.pieces[-1].truncated and COUNTER.count(small.text) <= 45


def test_same_input_same_bytes():
    docs = [SimpleNamespace(id="kb-1", title=None, source=None, text="Short.")]
    make = lambda: {"system": [assembly.system_candidate("Policy.")], "goal": assembly.goal_candidates("g", ["c"]),
                    "documents": assembly.document_candidates(docs, COUNTER, 40)}
    assert fit(make(), 300, COUNTER).text.encode() == fit(make(), 300, COUNTER).text.encode()


def test_a_raw_turn_too_long_for_the_window_leaves_a_marker_not_a_silent_gap():
    """Found by a helper: a tool dump too long for what was left was skipped and the turn before it placed, so the
    window read as if the user's question were answered by the turn before the dump. A marker line stands in its
    place, with its time, speaker, size and episode id."""
    t = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    turns = [SimpleNamespace(id=f"e{i}", kind=k, role=r, speaker=None, content=c, source="user_explicit",
                             occurred_at=t.replace(minute=i))
             for i, (k, r, c) in enumerate([("message", "user", "Where is my parcel?"),
                                            ("tool_result", "tool", "hub scan " * 400),
                                            ("message", "assistant", "It is at the hub.")])]
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "recent": assembly.tail_candidates(list(reversed(turns)))}
    out = fit(cands, 120, COUNTER)
    recent = [p for p in out.pieces if p.tier == "recent"]
    assert [p.id for p in recent] == ["episode:e0", "episode:e1", "episode:e2"]
    marker = recent[1]
    assert marker.truncated and marker.text.startswith("[2024-05-01T09:01:00Z] tool: [left out for the budget: ")
    size = COUNTER.count(assembly.episode_line(turns[1]) + "\n")
    assert marker.text.endswith(f": {size} tokens; episode e1]\n") and size > 120
    assert "Where is my parcel?" in out.text and "It is at the hub." in out.text and not out.dropped
    assert COUNTER.count(out.text) <= 120


def test_markers_stand_only_between_placed_turns():
    """Turns older than the oldest one that fits get no marker (a window of markers would say nothing): they are
    dropped, their room left to the later tiers."""
    t = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    turns = [SimpleNamespace(id=f"e{i}", kind="message", role="user", speaker=None, source="user_explicit",
                             content=("long words " * 300) if i < 5 else f"short {i}", occurred_at=t.replace(minute=i))
             for i in range(6)]
    cands = {"system": [assembly.system_candidate("Be exact.")],
             "recent": assembly.tail_candidates(list(reversed(turns)))}
    out = fit(cands, 100, COUNTER)
    assert [p.id for p in out.pieces if p.tier == "recent"] == ["episode:e5"]
    assert sorted(d.id for d in out.dropped) == [f"episode:e{i}" for i in range(5)]
    assert all(any(w in d.reason for w in ("does not fit", "exhausted", "older than")) for d in out.dropped)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.integers(1, 400), min_size=1, max_size=8), st.integers(20, 400))
@example([1, 30, 400], 40).via("the helper's case: the oldest turn shown, the two newer ones gone")
@example([1, 30, 400], 68)
def test_the_raw_turns_shown_are_the_newest_without_an_unmarked_gap(sizes, budget):
    """Found by a helper: with a tool dump and its marker both too long, the walk went on and placed an older, shorter
    turn ("Cancel order A-1") while the newer one that reversed it was missing without a trace. Whatever the sizes
    and budget, the turns shown (whole or as markers) are the newest ones, contiguous."""
    t = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)
    turns = [SimpleNamespace(id=f"e{i}", kind="message", role="user", speaker=None, source="user_explicit",
                             content="word " * n, occurred_at=t.replace(minute=i)) for i, n in enumerate(sizes)]
    cands = {"system": [assembly.system_candidate("Be.")],
             "recent": assembly.tail_candidates(list(reversed(turns)))}
    out = fit(cands, budget, COUNTER)
    shown = sorted(int(p.id.removeprefix("episode:e")) for p in out.pieces if p.tier == "recent")
    assert shown == list(range(len(sizes) - len(shown), len(sizes))), (shown, sizes, budget)
    assert not shown or not next(p for p in out.pieces if p.id == f"episode:e{shown[0]}").truncated
    assert COUNTER.count(out.text) <= budget
