"""The sweeper: physically removes what retention has expired, tenant by tenant, in bounded transactions.

Reads already hide expired data (they filter on `retain_until <= now`); the sweeper makes it go away. Per tenant, in
order: sync legal-hold flags, stamp `retain_until` where missing or stale (see `Retention.stamp`), expire sessions
idle past the session TTL or past their kept `retain_until` (with their episodes, pins and summaries), expire
episodes past their retention, then facts past their TTL. Held data is never selected. A write to a session that is
past the session TTL expires it first, through the same cascade (`Sweeper.expire_idle_sessions`), so the write
starts it afresh; an episode re-sent under the idempotency key of one past its retention expires that one in the
write that stores the new one (`Sweeper.expire_episodes`), and a turn re-sent under the key of a turn with such an
episode expires it before its receipt could replay it (`Sweeper.expire_past_retention`).
Each batch of `settings.sweep_batch_size` records is one transaction through the cascade in "expire" mode
(`Eraser.expire`), and deletes at most `settings.erasure_step_chars` characters of episode content (a batch over it
takes its first step's episodes and the sessions that step empties, and the next batch the rest: `Eraser.steps`); a
tenant that had anything removed gets one audit record (action "sweep"). Receipts and totals list every kind of
`SWEEP_KINDS`, zero or not.

`graphmem worker` and `graphmem serve --with-worker` run it every `settings.sweep_interval_s` seconds in a
thread (`Sweeper.start`, whose stop call ends the run in progress after its current batch and waits for it);
`POST /v1/admin/sweep` runs it on demand.
"""
from __future__ import annotations

import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

from graphmem.governance import audit
from graphmem.errors import Conflict
from graphmem.governance.erasure import Eraser
from graphmem.governance.models import SWEEP_KINDS, Receipt, SweepReceipt, every_kind
from graphmem.governance.retention import Retention
from graphmem.settings import Settings
from graphmem.store import Database, require_tenant
from graphmem.store.db import Tx
from graphmem.timeutil import to_utc, utcnow

log = logging.getLogger("graphmem.sweeper")
MAX_BATCHES = 10_000
"""Safety bound on batches per kind per tenant and run (10,000 x batch size records)."""


class Sweeper:
    """Removes expired sessions, episodes and facts. `now` is injectable everywhere (aware UTC datetime)."""

    def __init__(self, db: Database, settings: Settings, retention: Retention, eraser: Eraser):
        self.db, self.settings, self.retention, self.eraser = db, settings, retention, eraser

    def tenants(self) -> list[str]:
        """Every tenant that holds episodes, facts or sessions."""
        return [r["tenant_id"] for r in self.db.rows("tenants/list_with_data") if r["tenant_id"]]

    def run_once(self, now: datetime | None = None, stop: threading.Event | None = None) -> SweepReceipt:
        """One sweep over every tenant (what `graphmem worker` runs periodically), ending after the current batch
        once `stop` is set. A tenant whose sweep fails is logged and skipped; the others still run."""
        return self.sweep(None, now, stop)

    def sweep(self, tenant_id: str | None = None, now: datetime | None = None,
              stop: threading.Event | None = None) -> SweepReceipt:
        """Sweep one tenant (`tenant_id`) or, with None, every tenant (until `stop` is set, if given). Returns
        per-tenant receipts (the named tenant's always; over every tenant, those where something was stamped or
        removed) and totals, each by every kind of `SWEEP_KINDS`. Raises `TenantRequired` for an empty tenant id."""
        now = to_utc(now, "now") if now else utcnow()
        if tenant_id is not None:
            require_tenant(tenant_id)
        out = SweepReceipt(at=now)
        totals: Counter = Counter()
        for t in ([tenant_id] if tenant_id is not None else self.tenants()):
            if stop is not None and stop.is_set():
                break
            try:
                receipt = self.sweep_tenant(t, now, stop)
            except Exception:
                if tenant_id is not None:
                    raise
                log.exception("sweep failed for tenant %s", t)
                continue
            if tenant_id is not None or any(receipt.counts.values()):
                out.tenants[t] = receipt
                totals.update(receipt.counts)
        out.totals = every_kind(SWEEP_KINDS, totals)
        return out

    def sweep_tenant(self, tenant_id: str, now: datetime, stop: threading.Event | None = None) -> Receipt:
        """Sweep one tenant at `now`, stopping between batches once `stop` is set. Returns its receipt (counts by
        every kind of `SWEEP_KINDS`, zeros included). What was removed gets one audit record, also when the sweep
        stopped early or failed part way (then the error is raised after it is written)."""
        counts: Counter = Counter()
        try:
            self._sweep_tenant(tenant_id, now, stop, counts)
        finally:
            full = every_kind(SWEEP_KINDS, counts)
            removed = [k for k, v in full.items() if v and not k.startswith(("stamped_", "hold_", "facts_kept"))]
            audit_id = None
            if removed:
                audit_id = self.db.write(lambda tx: audit.write(tx, tenant_id, "sweep", "tenant", None, full, now,
                                                                "sweeper")).id
        return Receipt(action="sweep", target_kind="tenant", counts=full, at=now, audit_id=audit_id)

    def refuse_held_sessions(self, tenant_id: str, session_ids: list[str], now: datetime,
                             fields: Mapping[str, str] | None = None) -> None:
        """Raise `Conflict` when one of `session_ids` is past retention at `now` (aware UTC) as every read treats it
        but kept under a legal hold (`governance/held_expired_sessions`): a write naming it could neither expire the
        held data nor revive it, so it is refused before anything is written (one read, none for no ids; a window
        makes it first, so the warm-up plans it: `Database.rows`'s `warmed`). The first such id in
        `session_ids` order is named: its field is `fields[id]` (the item of a batch that names it,
        `episodes[1].session_id`), `session_id` when `fields` does not name it. Raises `TenantRequired` for an empty
        tenant id."""
        require_tenant(tenant_id)
        held = set(self.db.rows("governance/held_expired_sessions", warmed=True, tenant_id=tenant_id,
                                session_ids=session_ids, now=now)[0]["ids"]) if session_ids else set()
        for sid in (s for s in session_ids if s in held):
            raise Conflict(f"session {sid!r} past retention, kept under a legal hold: start a new session",
                           field=(fields or {}).get(sid, "session_id"))

    def expire_idle_sessions(self, tenant_id: str, session_ids: list[str | None], now: datetime | None = None,
                             fields: Mapping[str, str] | None = None) -> dict[str, int]:
        """Expire, before a write to them, those of `session_ids` that are past retention now and unheld
        (`governance/idle_sessions`: idle past the tenant's `session_ttl_days`, as the sweeper's session pass would
        expire them, or past their stamped `retain_until`, as every read already hides them), with the same cascade
        (their episodes, pins, summaries, turn receipts and the sessions). A write to such a session (a turn, an
        episode, a pin write, a window load that starts its window afresh) bumps `last_active_at`: without this it
        would revive the old content for another TTL. Returns the counts by every kind of `SWEEP_KINDS`, audited
        as a sweep (action "sweep", actor "sweeper") in the same transaction; {} when none was due (one read).
        Raises `Conflict` (field `session_id`, or the one `fields` gives the session) when one of them is past
        retention as every read treats it but kept under a legal hold (`refuse_held_sessions`); `TenantRequired`
        for an empty tenant id. Sessions with more episode content than `settings.erasure_step_chars` go in steps
        of that size (their episodes first, each step a transaction audited as a sweep), as the sweeper's passes
        take them."""
        require_tenant(tenant_id)
        ids = list(dict.fromkeys(s for s in session_ids if s))
        now = to_utc(now, "now") if now else utcnow()
        t = {"tenant_id": tenant_id, "session_ids": ids, "now": now}
        self.refuse_held_sessions(tenant_id, ids, now, fields)
        due = [r["id"] for r in self.db.rows("governance/idle_sessions", **t)] if ids else []
        if not due:
            return {}

        def work(tx, step: list[str] | None = None) -> Counter:
            due = [r["id"] for r in tx.rows("governance/idle_sessions", **t)]   # again, under the write
            if not due:
                return Counter()
            eps = tx.one("governance/session_episodes", tenant_id=tenant_id, session_ids=due)["episodes"]
            if step is None:
                got = self.eraser.expire(tx, tenant_id, episode_ids=eps, session_ids=due, now=now)
            else:    # an early step: those of its episodes still due, the sessions stay for the last transaction
                got = self.eraser.expire(tx, tenant_id, episode_ids=sorted(set(step) & set(eps)), now=now)
            audit.write(tx, tenant_id, "sweep", "tenant", None, every_kind(SWEEP_KINDS, got), now, "sweeper")
            return got
        done: Counter = Counter()
        eps = self.db.one("governance/session_episodes", tenant_id=tenant_id, session_ids=due)["episodes"]
        for step in self.eraser.steps(self.db, tenant_id, eps)[:-1]:   # more content than one transaction deletes
            done.update(self.db.write(lambda tx: work(tx, [r["id"] for r in step])))
        done.update(self.db.write(work))
        return every_kind(SWEEP_KINDS, done) if done else {}

    def expire_episodes(self, tx: Tx, tenant_id: str, episode_ids: list[str], now: datetime) -> dict[str, int]:
        """Expire, inside the caller's transaction `tx`, those of `episode_ids` that the sweeper's episode pass
        would expire at `now` or every read hides then (aware UTC: unheld, past their own `retain_until` or their
        session's; `governance/expired_named_episodes`), through the same cascade (`Eraser.expire`: their
        provenance edges, refusals, summaries covering them, turn receipts naming them, the episodes), audited as
        a sweep (action "sweep", actor "sweeper"). A write that re-sends such an episode's idempotency key calls it
        (`graphmem.store.episodes.append`), so the key stores the new episode instead of replaying one every read
        treats as gone. Returns the counts by every kind of `SWEEP_KINDS`, or {} when none was due. Raises
        `TenantRequired` for an empty tenant id."""
        require_tenant(tenant_id)
        due = [r["id"] for r in tx.rows("governance/expired_named_episodes", tenant_id=tenant_id,
                                        ids=sorted(set(episode_ids)), now=now)] if episode_ids else []
        if not due:
            return {}
        full = every_kind(SWEEP_KINDS, self.eraser.expire(tx, tenant_id, episode_ids=due, now=now))
        audit.write(tx, tenant_id, "sweep", "tenant", None, full, now, "sweeper")
        return full

    def expire_past_retention(self, tenant_id: str, episode_ids: list[str],
                              now: datetime | None = None) -> dict[str, int]:
        """`expire_episodes` in a write transaction of its own, after one read that finds none due ({}). A re-sent
        turn calls it with the episodes its receipt names: a receipt naming one past retention goes with it (the
        cascade's turn receipts), and the turn is stored anew instead of replayed. `now`: aware UTC, default the
        current time. Raises `TenantRequired`."""
        require_tenant(tenant_id)
        now = to_utc(now, "now") if now else utcnow()
        ids = sorted(set(episode_ids))
        if not ids or not self.db.rows("governance/expired_named_episodes", tenant_id=tenant_id, ids=ids, now=now):
            return {}
        return self.db.write(lambda tx: self.expire_episodes(tx, tenant_id, ids, now))

    def _sweep_tenant(self, tenant_id: str, now: datetime, stop: threading.Event | None, counts: Counter) -> None:
        """`sweep_tenant`'s work, counting into `counts` as it goes."""
        counts["hold_flags_changed"] = self.retention.sync_holds(tenant_id, stamp_sessions=False)   # stamp() does
        stamped = self.retention.stamp(tenant_id)
        counts["stamped_facts"], counts["stamped_episodes"] = stamped["facts"], stamped["episodes"]
        view = self.retention.settings(tenant_id)
        size = self.settings.sweep_batch_size
        t = {"tenant_id": tenant_id}

        # idle past the TTL, or past a retain_until kept when the TTL was made longer or removed (read as gone)
        cutoff = now - timedelta(days=view.session_ttl_days) if view.session_ttl_days else None

        def sessions_batch(tx):
            ids = [r["id"] for r in tx.rows("governance/expired_sessions", **t, cutoff=cutoff, now=now, limit=size)]
            eps = tx.one("governance/session_episodes", **t, session_ids=ids)["episodes"] if ids else []
            first, *rest = self.eraser.steps(tx, tenant_id, eps) or [[]]
            if rest:   # more content than one transaction deletes: the first step's episodes, and the sessions it
                # empties; the next batch selects the rest again
                left = {r["session_id"] for step in rest for r in step}
                return size, self.eraser.expire(tx, tenant_id, episode_ids=[r["id"] for r in first],
                                                session_ids=[i for i in ids if i not in left], now=now)
            return len(ids), self.eraser.expire(tx, tenant_id, episode_ids=eps, session_ids=ids, now=now)
        self._loop(sessions_batch, counts, stop)

        def episodes_batch(tx):
            ids = [r["id"] for r in tx.rows("governance/expired_episodes", **t, now=now, limit=size)]
            first, *rest = self.eraser.steps(tx, tenant_id, ids) or [[]]
            return (size if rest else len(ids)), self.eraser.expire(tx, tenant_id, episode_ids=[r["id"] for r in first],
                                                                     now=now)
        self._loop(episodes_batch, counts, stop)

        def facts_batch(tx):
            ids = [r["id"] for r in tx.rows("governance/expired_facts", **t, now=now, limit=size)]
            return len(ids), self.eraser.expire(tx, tenant_id, fact_ids=ids, now=now)
        self._loop(facts_batch, counts, stop)

    def _loop(self, batch, counts: Counter, stop: threading.Event | None = None) -> None:
        size = self.settings.sweep_batch_size
        for _ in range(MAX_BATCHES):
            if stop is not None and stop.is_set():
                return
            n, got = self.db.write(batch)
            counts.update(got)
            if n < size:
                return

    def start(self, interval_s: float | None = None, join_timeout_s: float = 30.0) -> Callable[[], None]:
        """Run `run_periodically` in a daemon thread; returns the call that stops it: it sets the stop event and
        waits up to `join_timeout_s` seconds for the run in progress to end (after its current batch, audited), so
        the caller can then close the database."""
        stop = threading.Event()
        thread = threading.Thread(target=self.run_periodically, args=(stop, interval_s), name="sweeper", daemon=True)
        thread.start()

        def stopper() -> None:
            stop.set()
            thread.join(join_timeout_s)
        return stopper

    def run_periodically(self, stop: threading.Event, interval_s: float | None = None) -> None:
        """Run `run_once` every `interval_s` seconds (default `settings.sweep_interval_s`) until `stop` is set.
        Errors are logged, never raised: the next run tries again."""
        interval = interval_s or self.settings.sweep_interval_s
        while not stop.is_set():
            try:
                receipt = self.run_once(stop=stop)
                if receipt.totals:
                    log.info("sweep removed %s", receipt.totals)
            except Exception:
                log.exception("sweep failed")
            stop.wait(interval)
