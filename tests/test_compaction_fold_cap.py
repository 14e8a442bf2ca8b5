"""One compaction folds at most `compaction_max_fold_tokens` tokens of turns, oldest first, and reads only those
turns' content; a tail imported in bulk is folded in steps, which the background job runs one after the other."""
from __future__ import annotations

from tests.test_context_sessions import say

TURN = "Order {i:03d} for the walrus depot: {words}"


def _turns(ctx, tenant, sid, n):
    words = " ".join(f"crate{j}" for j in range(40))       # ~100 tokens a turn
    for i in range(n):
        ctx.append_turn(tenant, sid, say(f"{sid}-{i}", "u1", TURN.format(i=i, words=words), minute=i))


def test_a_compaction_folds_at_most_its_cap_and_the_rest_follows(make_context, tenant):
    """Helper-found: a session of 2,781 tool results of 99k characters, compacted at once, read every raw turn with
    its content in one statement and ran Neo4j out of heap (a crash needing a restart). Now a run folds the oldest
    turns up to the cap, says how many older turns it left, and the next run takes them."""
    ctx = make_context(compaction_threshold_tokens=10**9, compaction_keep_tokens=0, compaction_max_fold_tokens=350)
    _turns(ctx, tenant, "bulk", 12)
    tokens = [e.token_count for e in ctx.compactor.raw_tail(tenant, "bulk")]
    assert len(tokens) == 12 and all(80 < t < 175 for t in tokens), tokens

    first = ctx.compact_now(tenant, "bulk", force=True)
    fits = next(n for n in range(1, 12) if sum(tokens[:n + 1]) > 350)      # the oldest turns within the cap
    assert first.compacted_episodes == fits and first.remaining_episodes == 11 - fits, first
    assert "Order 000" in first.summary.text and f"Order {fits:03d}" not in first.summary.text
    second = ctx.compact_now(tenant, "bulk", force=True)
    assert second.summary.rev == 2 and second.compacted_episodes == fits
    assert f"Order {fits:03d}" in second.summary.text and "Order 000" in second.summary.text   # carried forward

    # in the background, one job runs again while its run left older turns, until the tail is under the threshold
    _turns(ctx, tenant, "bg", 12)                                  # imported in bulk: no compaction was due
    ctx2 = make_context(compaction_threshold_tokens=300, compaction_keep_tokens=0, compaction_max_fold_tokens=350)
    ctx2.schedule_compaction(tenant, "bg")
    done = ctx2.wait_for_compaction(tenant, "bg")
    assert done is not None and done.remaining_episodes == 0, done
    assert sum(e.token_count for e in ctx2.compactor.raw_tail(tenant, "bg")) <= 300
    assert len(ctx2.summaries.list(tenant, "bg")) >= 3             # one revision a step, one job
