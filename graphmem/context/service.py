"""`ContextService`: what the agent loop calls - load the window at the start of a turn (`assemble`), append the
turn at its end (`append_turn`) - plus sessions, pins, consent and summaries. Built by `build(services)` as
`services.context`.

Degradation (DESIGN.md principle 7): recall search runs in a thread pool under a per-source timeout
(`settings.context_search_timeout_s`, and never past `settings.context_latency_budget_s` of the request). If it is
missing, raises or is too slow, the window is built from what the graph read gave (system policy, goal, tools,
pins, tail, summary) and the reply lists the source under `degraded`. The graph read itself is required: without
Neo4j there is no session state and the call fails (503).

Compaction is scheduled after a turn whose raw tail passed the threshold, on a background executor in this process;
the append reply never waits for it (`wait_for_compaction` lets tests and the worker wait). If the process dies
first, the next turn of the session schedules it again (the threshold is still exceeded).
"""
from __future__ import annotations

import concurrent.futures as cf
import contextlib
import hashlib
import json
import logging
import re
import threading
import time
from collections.abc import Iterator
from typing import Any


from graphmem.context import assembly
from graphmem.context.compaction import Compactor, SummaryStore
from graphmem.context.models import (CompactionResult, ContextRequest, Degraded, Summary, TurnIn, TurnResult,
                                     Window)
from graphmem.context.pins import (STORED as PIN_STORED, PinStore, check_definition, check_key, delete_in, from_row,
                                   pin_version_check, put_in, version_conflict)
from graphmem.context.sessions import SessionInfo, SessionStore, check_session_id, session_info
from graphmem.context.summarizer import build_summarizer
from graphmem.errors import Conflict, GraphmemError, InvalidInput, NotFound, Unavailable
from graphmem.identifiers import trim_blank
from graphmem.ingest.policy import redact_episode
from graphmem.models import EpisodeIn, new_id
from graphmem.ontology import SENSITIVE_CLASSES
from graphmem.store import episodes as episode_store
from graphmem.store import live, require_tenant
from graphmem.store.db import Tx
from graphmem.timeutil import utcnow
from graphmem.tokens import TokenCounter

log = logging.getLogger("graphmem.context")


class ContextService:
    """Sessions, pins, window assembly, the turn append and compaction. All methods take `tenant_id` first and raise
    `TenantRequired` when it is missing; `InvalidInput`/`NotFound`/`Conflict` name the field at fault."""

    def __init__(self, services: Any):
        self.services = services
        self.db = services.db
        self.settings = services.settings
        self.sessions = SessionStore(self.db, self.settings.session_ttl_s)
        self.pins = PinStore(self.db, before_write=self.expire_if_idle)
        self.summaries = SummaryStore(self.db)
        self.compactor = Compactor(self.db, self.settings, self.pins, self.summaries, build_summarizer(self.settings),
                                   expire=lambda t, ids: self.services.governance.sweeper.expire_past_retention(t, ids))
        self._search_pool = cf.ThreadPoolExecutor(max_workers=8, thread_name_prefix="context-search")
        self._compact_pool = cf.ThreadPoolExecutor(max_workers=self.settings.compaction_workers,
                                                   thread_name_prefix="context-compact")
        self._jobs: dict[tuple[str, str], cf.Future] = {}
        self._again: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self.last_compaction: dict[tuple[str, str], CompactionResult] = {}

    def expire_if_idle(self, tenant_id: str, session_id: str) -> bool:
        """Expire the session first if it is past the tenant's retention session TTL (`session_ttl_days`; the
        sweeper's cascade: `Sweeper.expire_idle_sessions`), before a write that would bump its `last_active_at`
        and so revive its old turns, pins and summaries. True when it was expired."""
        return bool(self.services.governance.sweeper.expire_idle_sessions(tenant_id, [session_id]))

    def close(self) -> None:
        """Stop the executors (running compactions finish first)."""
        self._search_pool.shutdown(wait=False, cancel_futures=True)
        self._compact_pool.shutdown(wait=True, cancel_futures=False)

    # ---- the window ------------------------------------------------------------------------------------------
    def assemble(self, tenant_id: str, session_id: str, req: ContextRequest, *, read_only: bool = False) -> Window:
        """Load the window for the next turn of `session_id` (see `graphmem.context.assembly` for the tier walk).
        A session idle past its TTL starts a fresh window (stored); with `read_only` (an analyst's key) the window
        is built as that reset would leave it and nothing is written.

        Raises `InvalidInput` (field `budget_tokens`) when the system policy alone exceeds `req.budget_tokens`, (field
        `user_id`) when `req.user_id` is given and the session belongs to another user (as `append_turn` does), and
        `Conflict` (field `session_id`), unless `read_only`, for a session past retention but kept under a legal hold
        (`Sweeper.refuse_held_sessions`). An unknown session gives a window without turns or pins (the first turn creates the session).
        """
        require_tenant(tenant_id)
        check_session_id(session_id)
        if not read_only:   # a window load may start the window afresh: not in a session kept past retention
            self.services.governance.sweeper.refuse_held_sessions(tenant_id, [session_id], utcnow())
        started = time.monotonic()
        counter = TokenCounter.for_model(req.model)
        state = self._state(tenant_id, session_id)
        notes: list[str] = []
        expired = state["session"] is not None and self.sessions.is_expired(state["session"])
        if expired and read_only:
            state = {**state, "tail": [], "tail_total": 0, "summary": None}
            notes.append(f"session was idle longer than its TTL ({self.settings.session_ttl_s:.0f} s): its next turn "
                         f"starts a fresh window, shown here (a read-only key does not reset it)")
        elif expired:
            self.expire_if_idle(tenant_id, session_id)   # past the retention TTL too: gone, not reset
            _, reset = self.sessions.reset_if_expired(tenant_id, session_id)
            state = self._state(tenant_id, session_id)
            if reset:
                notes.append(f"session was idle longer than its TTL ({self.settings.session_ttl_s:.0f} s): the window "
                             f"starts afresh; earlier turns are stored but not loaded")
        info: SessionInfo | None = state["session"]
        if info is not None and info.user_id and req.user_id and info.user_id != req.user_id:
            raise InvalidInput(f"session {session_id!r} belongs to another user", field="user_id")
        reset_at = info.window_reset_at if info else None
        if reset_at is not None and not notes:
            notes.append(f"window started afresh at {assembly.iso(reset_at)} (session TTL); earlier turns not loaded")
        summary: Summary | None = state["summary"]
        if summary is not None and reset_at is not None and summary.created_at < reset_at:
            summary = None
        tail: list[assembly.TailTurn] = state["tail"]
        if state["tail_total"] > len(tail):
            notes.append(f"{state['tail_total'] - len(tail)} older raw turn(s) not loaded (a window reads the newest "
                         f"{self.settings.context_tail_max_episodes}); compaction folds them into the summary")
        degraded: list[Degraded] = []
        search = None
        if trim_blank(req.query) and self.settings.context_retrieval_k > 0:
            search = self._search_pool.submit(self._search, tenant_id, session_id, req, [e.id for e in tail])
        hits = self._collect(search, started, degraded, notes)
        if not counter.exact:
            notes.append(f"no offline encoding for {req.model!r}: counted with {counter.encoding_name} (estimates)")
        cands: dict[str, list[assembly.Candidate]] = {
            "system": [assembly.system_candidate(req.system_policy)],
            "goal": assembly.goal_candidates(req.goal, req.constraints),
            "tools": assembly.tool_candidates([t.model_dump() for t in req.tools], req.query),
            "pins": assembly.pin_candidates(p for p in state["pins"] if p.status == "active"),
            "recent": assembly.tail_candidates(tail),
            "summaries": assembly.summary_candidates(summary, [p for p in state["pins"] if p.status == "candidate"]),
            "retrieved": assembly.hit_candidates(hits),
            "documents": assembly.document_candidates(req.documents, counter,
                                                      self.settings.context_document_snippet_tokens),
        }
        result = assembly.fit(cands, req.budget_tokens, counter)
        return Window(session_id=session_id, model=req.model, encoding=counter.encoding_name,
                      exact_tokens=counter.exact, budget_tokens=req.budget_tokens, total_tokens=result.total_tokens,
                      tier_tokens=result.tier_tokens, text=result.text, pieces=result.pieces, dropped=result.dropped,
                      degraded=degraded, summary_rev=summary.rev if summary else None, window_reset_at=reset_at,
                      notes=notes, pin_versions={p.key: p.version for p in state["pins"]})

    def _state(self, tenant_id: str, session_id: str) -> dict[str, Any]:
        """Session (None when unknown), pins, current summary and raw tail (newest first) in one auto-commit read
        (cypher/sessions/window_state). The query returns only what assembly needs, temporal values as ISO
        strings; the tail comes back as `TailTurn`s. (Consent is read by the search, which applies it.)"""
        row = self.db.read_one("sessions/window_state", warmed=True, tenant_id=tenant_id, session_id=session_id,
                               limit=self.settings.context_tail_max_episodes, now=utcnow().isoformat())
        return {"session": session_info(row["session"]) if row["session"] else None,
                "pins": [from_row(p) for p in row["pins"] if live(p, *PIN_STORED)],
                "summary": Summary(**row["summaries"][0]) if row["summaries"] else None,
                "tail": [assembly.TailTurn.from_row(e) for e in row["tail"]], "tail_total": row["tail_total"]}

    def _search(self, tenant_id: str, session_id: str, req: ContextRequest, shown: list[str]):
        """Recall search for the window: facts and episodes, ranked among what the session may see and does not
        already show (`shown`: the ids of its recent turns), so that the window's k hits are all new to it (the
        `Viewer` filter runs inside the search, before each retriever keeps its top hits; a helper found 4 of 8 hits
        spent on recent turns and dropped after). It starts once those turns are read (~3 ms), not beside that read."""
        from graphmem.recall.models import SearchRequest, Viewer

        return self.services.recall.search(tenant_id, SearchRequest(
            query=trim_blank(req.query)[:2000], k=self.settings.context_retrieval_k, targets=["fact", "episode"],
            as_of=req.as_of, depth=self.settings.context_search_depth),
            Viewer(session_id=session_id, user_id=req.user_id, shown=shown))

    def _collect(self, search: cf.Future | None, started: float, degraded: list[Degraded],
                 notes: list[str]) -> list[Any]:
        """The search hits, or [] with the source marked degraded (missing, failed, or slower than its timeout).
        Facts the search withheld from the window are counted in `notes`."""
        if search is None:
            return []
        per_source = self.settings.context_search_timeout_s
        left = self.settings.context_latency_budget_s - (time.monotonic() - started)
        timeout = max(0.0, min(per_source, left))
        try:
            response = search.result(timeout=timeout)
        except cf.TimeoutError:
            search.cancel()
            # the reason names configured limits only, never a measured time, so that the reply stays byte-stable
            reason = f"timed out after {per_source:.2f} s" if timeout >= per_source else \
                f"timed out: the window's latency budget ({self.settings.context_latency_budget_s:.2f} s) was spent"
            degraded.append(Degraded(source="search", reason=reason))
            return []
        except (AttributeError, ImportError) as exc:
            degraded.append(Degraded(source="search", reason=f"recall service unavailable: {type(exc).__name__}"))
            return []
        except Exception as exc:  # any failure of an optional source degrades, never blocks (principle 7)
            detail = exc.detail if isinstance(exc, GraphmemError) else str(exc)
            degraded.append(Degraded(source="search", reason=f"{type(exc).__name__}: {detail[:200]}"))
            return []
        for item in sorted(response.degraded, key=lambda d: (d.source, d.reason)):
            degraded.append(Degraded(source=f"search.{item.source}", reason=item.reason))
        if response.withheld_consent:
            notes.append(f"{response.withheld_consent} preference(s) learned outside this session withheld "
                         f"(preferences cross a user's sessions only with consent, never to another user)")
        if response.withheld_sensitive:
            notes.append(f"{response.withheld_sensitive} sensitive fact(s) ({', '.join(SENSITIVE_CLASSES)}) learned "
                         f"outside this session withheld")
        return list(response.hits)

    # ---- the turn ------------------------------------------------------------------------------------------
    def append_turn(self, tenant_id: str, session_id: str, turn: TurnIn, *, agent_id: str | None = None) -> TurnResult:
        """Append a turn: its episodes (through the ingest service: redaction, durable extraction) and its pin
        updates, idempotent by `turn.idempotency_key` (a replay returns the first reply with `replayed` true).

        Pin updates are checked against their expected versions before anything is written (a stale one raises
        `Conflict`, field `pins[i].expected_version`, and nothing is stored) and applied in one transaction after the
        episodes. If a concurrent writer wins between the check and the write (a new version, or the pin deleted),
        the episodes are stored and the call raises `Conflict`; retrying with the same key does not duplicate them.
        When that writer was a retry of this very turn (same key, sent concurrently), the call replays its answer
        instead (also when that retry deleted a pin this try then found missing: not a 404); so does a concurrent try of
        a turn without pins (the receipt is written under the session's write lock: of two tries sent at once, the
        second replays the first's answer, 200 not 201, and one receipt is stored). Compaction is scheduled (not
        awaited) when the raw tail passes the threshold.

        The turn's user owns the session: a session without a user (created by an episode sent without one) is
        claimed by the first turn (`SessionStore.create`, under the session's write lock). A session of another user
        raises `InvalidInput` (field `user_id`) before anything is written, also when that user claimed it
        concurrently. A session past the tenant's retention session TTL (`session_ttl_days`) is expired first
        (`expire_if_idle`): the turn starts it afresh, as after the sweep, and never revives its old content.
        """
        require_tenant(tenant_id)
        check_session_id(session_id)
        self.expire_if_idle(tenant_id, session_id)
        if (seen := self._replay(tenant_id, session_id, turn)) is not None:
            return seen
        try:
            return self._append_turn(tenant_id, session_id, turn, agent_id)
        except (Conflict, NotFound):   # a concurrent try of this turn may have moved or deleted its pins first
            if (seen := self._replay(tenant_id, session_id, turn)) is not None:
                return seen
            raise
        except InvalidInput as exc:
            # a concurrent try of this key with other episodes stored its own first, under the keys derived from
            # the turn's (`_episodes`): the clash is the turn key's, not a key the caller never sent
            index = re.fullmatch(r"episodes\[(\d+)\]\.idempotency_key", exc.field or "")
            if index is None or turn.episodes[int(index[1])].idempotency_key is not None:
                raise
            if (seen := self._replay(tenant_id, session_id, turn)) is not None:
                return seen
            # no receipt to compare with (not written yet, or erased with one of the turn's episodes): what the
            # stored episodes carry can be compared, the pin updates cannot
            differ = self._stored_differences(tenant_id, session_id, turn)
            what = (f"{_differ(differ)}; its pin updates cannot be compared: that turn has no receipt, not "
                    "written yet or erased with one of its episodes" if differ else
                    "other episodes, user or pin updates")
            raise InvalidInput(f"idempotency_key {turn.idempotency_key!r} already names another turn of this "
                               f"session ({what}); use a new key for a new turn", field="idempotency_key") from None

    def _stored_differences(self, tenant_id: str, session_id: str, turn: TurnIn) -> list[str]:
        """The fields in which `turn` differs from the turn stored under its key, as far as that turn's stored
        episodes tell (those under the keys derived from the turn's, `_episodes`; an episode sent with its own key
        is not the turn's to compare): `episodes[i].<attribute>` (content, kind, role, speaker or source, compared
        after redaction as stored: `graphmem.store.episodes.differences`), then the `user_id` and versions the
        episodes carry (`agent_version`, `prompt_version`, `tool_version`). Pin updates are on no episode: only a
        receipt's fingerprints compare them. [] when no episode of the turn is stored."""
        sent = [(i, redact_episode(e)[0]) for i, (e, t) in enumerate(zip(self._episodes(session_id, turn),
                                                                        turn.episodes)) if t.idempotency_key is None]
        stored = self.db.read(lambda tx: episode_store.by_keys(tx, tenant_id, [e.idempotency_key for _, e in sent]))
        fields, turn_fields = [], set()
        for i, e in sent:
            if (s := stored.get(e.idempotency_key)) is None:
                continue
            fields += [f"episodes[{i}].{a}" for a in episode_store.differences(s, e) if a not in ("session_id",
                                                                                                 "user_id")]
            turn_fields |= {a for a in ("user_id", "agent_version", "prompt_version", "tool_version")
                            if getattr(s, a) != getattr(e, a)}
        return fields + sorted(turn_fields)

    def _replay(self, tenant_id: str, session_id: str, turn: TurnIn) -> TurnResult | None:
        """The stored answer of the turn under `turn.idempotency_key` in the session, marked `replayed`, or None.
        Raises `InvalidInput` (field `idempotency_key`) when the key was used for another turn: other episodes,
        user or pin updates (`turn_fingerprint`) would otherwise be dropped silently; (field `user_id`) instead when
        that turn made the session another user's, the cause the caller can act on (two users racing to claim a
        session with the same key get the same answer whichever order their calls reach the server). A receipt
        naming an episode past its retention is no answer: that episode is expired first, as the sweeper would
        (`Sweeper.expire_past_retention`, whose cascade deletes the receipt), and the turn is stored anew (None);
        one naming an episode past its retention but kept under a legal hold raises `Conflict` (`_replayed`)."""
        seen = self.db.one("sessions/turn_get", tenant_id=tenant_id, session_id=session_id, key=turn.idempotency_key)
        if seen is not None and self.services.governance.sweeper.expire_past_retention(
                tenant_id, json.loads(seen["result"])["episode_ids"]):
            seen = self.db.one("sessions/turn_get", tenant_id=tenant_id, session_id=session_id,
                               key=turn.idempotency_key)
        return None if seen is None else self._replayed(tenant_id, session_id, turn, seen)

    def _replayed(self, tenant_id: str, session_id: str, turn: TurnIn, seen: dict[str, Any]) -> TurnResult:
        """The answer of the stored receipt `seen` (its result and fingerprint) to `turn`: the answer of a re-sent
        turn (`_replay`) and of a try that lost the race to record its receipt to a concurrent try of its key
        (`_append_turn`, `_ReceiptTaken`), so both apply the same checks. Raises `Conflict` (field
        `idempotency_key`) when the receipt names an episode past its retention but kept under a legal hold
        (`graphmem.store.episodes.refuse_held_expired`: the key is taken by data kept under the hold, which is not
        replayed), and `InvalidInput` when the key names another turn (`_replay`)."""
        ids = json.loads(seen["result"])["episode_ids"]
        self.db.read(lambda tx: episode_store.refuse_held_expired(tx, tenant_id, ids))
        if seen["fingerprint"] is not None and seen["fingerprint"] not in (turn_fingerprint(turn),
                                                                            turn_fingerprint(turn, legacy=True)):
            info = self.sessions.find(tenant_id, session_id)
            if info is not None and info.user_id and info.user_id != turn.user_id:
                raise InvalidInput(f"session {session_id!r} belongs to another user", field="user_id")
            stored = json.loads(seen["fields"]) if seen.get("fields") else None
            sent = turn_field_fingerprints(turn)
            differ = ([f for f in sorted(stored.keys() | sent.keys()) if stored.get(f) != sent.get(f)]
                      if stored is not None else [])
            what = _differ(differ) if differ else "other episodes, user, versions or pin updates"
            raise InvalidInput(f"idempotency_key {turn.idempotency_key!r} already names another turn of this session "
                               f"({what}); use a new key for a new turn", field="idempotency_key")
        return TurnResult(**{**json.loads(seen["result"]), "replayed": True})

    def _append_turn(self, tenant_id: str, session_id: str, turn: TurnIn, agent_id: str | None) -> TurnResult:
        if not turn.episodes and not turn.pins:
            raise InvalidInput("a turn needs at least one episode or pin update", field="episodes")
        keys = set()
        for i, p in enumerate(turn.pins):
            check_key(p.key, f"pins[{i}].key")
            if p.key in keys:
                raise InvalidInput(f"pin {p.key!r} is updated twice in one turn", field=f"pins[{i}].key")
            keys.add(p.key)
            if p.delete == (p.value is not None):
                raise InvalidInput("a pin update has either a value or delete: true", field=f"pins[{i}].value")
            if p.episode_index is not None and p.episode_index >= len(turn.episodes):
                raise InvalidInput(f"episode_index {p.episode_index} but the turn has {len(turn.episodes)} episodes",
                                   field=f"pins[{i}].episode_index")
        info = self.sessions.find(tenant_id, session_id)
        if info is not None and info.user_id and info.user_id != turn.user_id:
            raise InvalidInput(f"session {session_id!r} belongs to another user", field="user_id")
        self._precheck_pins(tenant_id, session_id, turn)
        episodes = self._episodes(session_id, turn)
        if episodes:   # a refused turn writes nothing, not even its session
            with _turn_fields(turn):
                self._ingest().check_episodes(tenant_id, episodes)
        reset = created = False
        if info is None or info.user_id is None:   # create the session, or claim one that has no user
            try:
                _, created = self.sessions.create(tenant_id, turn.user_id, session_id, agent_id)
            except Conflict as exc:                 # another user created or claimed it since `find`
                raise InvalidInput(exc.detail, field="user_id") from None
        if not created:
            _, reset = self.sessions.reset_if_expired(tenant_id, session_id)
        with _turn_fields(turn):
            stored = (self._ingest().append_episodes(tenant_id, episodes, agent_id=agent_id, expire_idle=False)
                      if episodes else [])
        ids = [e.id for e, _ in stored]
        scheduled = bool(stored) and self.compactor.due(tenant_id, session_id)

        def work(tx: Tx) -> dict[str, int | None]:
            versions: dict[str, int | None] = {}
            for i, p in enumerate(turn.pins):
                field = f"pins[{i}].expected_version"
                if p.delete:
                    try:
                        delete_in(tx, tenant_id, session_id, p.key, p.expected_version, field, f"pins[{i}].")
                    except NotFound as exc:      # it was there at the check: a concurrent writer deleted it
                        if exc.field != f"pins[{i}].key":
                            raise
                        raise Conflict(f"pin {p.key!r} was deleted since this turn was checked", field=field) from None
                    versions[p.key] = None
                else:
                    set_by = ids[p.episode_index if p.episode_index is not None else -1] if ids else None
                    try:
                        versions[p.key] = put_in(tx, tenant_id, session_id, p.key, p.value, p.expected_version,
                                                 set_by, field, f"pins[{i}].")[0].version
                    except InvalidInput as exc:   # the tenant redefined the key since the check: the race's 409
                        if exc.field != f"pins[{i}].value.type" or not ids:
                            raise
                        raise Conflict(f"{exc.detail} since this turn was checked; its episodes are stored: send "
                                       "the turn again with the same idempotency_key and a value of that type",
                                       field=exc.field) from None
            result = TurnResult(session_id=session_id, episode_ids=ids, created=[c for _, c in stored], pins=versions,
                                compaction_scheduled=scheduled, window_reset=reset)
            receipt = tx.one("sessions/turn_put", tenant_id=tenant_id, session_id=session_id,
                             key=turn.idempotency_key, result=result.model_dump_json(),
                             fingerprint=turn_fingerprint(turn), fields=json.dumps(turn_field_fingerprints(turn)),
                             now=utcnow(), call_id=new_id())
            if not receipt["created"]:     # a try of this key committed first: undo this one's pins, answer with it
                raise _ReceiptTaken(receipt)
            return versions
        try:
            versions = self.db.write(work)
        except _ReceiptTaken as taken:
            try:
                return self._replayed(tenant_id, session_id, turn, taken.receipt)
            except (InvalidInput, Conflict):
                # another body took the key first (or the turn that won names held data past retention): what this
                # try stored goes again, so that the 422 (409) stored nothing, but for what the turn that won holds
                # (its first episodes may have replayed this try's)
                kept = set(json.loads(taken.receipt["result"])["episode_ids"])
                self.services.graph.discard_turn_episodes(
                    tenant_id, session_id, [e.id for e, created in stored if created and e.id not in kept])
                raise
        if scheduled:
            self.schedule_compaction(tenant_id, session_id)
        return TurnResult(session_id=session_id, episode_ids=ids, created=[c for _, c in stored], pins=versions,
                          compaction_scheduled=scheduled, window_reset=reset)

    def _precheck_pins(self, tenant_id: str, session_id: str, turn: TurnIn) -> None:
        if not turn.pins:
            return

        def work(tx: Tx) -> None:
            for i, p in enumerate(turn.pins):
                if p.value is not None:
                    check_definition(tx, tenant_id, p.key, p.value, f"pins[{i}].value.type")
                current, candidate = pin_version_check(tx, tenant_id, session_id, p.key)
                expected = p.expected_version or None  # 0 and None both mean "a new pin"
                if p.delete and expected is None:   # as DELETE /v1/sessions/{id}/pins/{key} without a version
                    raise InvalidInput("a delete names the version it read (expected_version)",
                                       field=f"pins[{i}].expected_version")
                if p.delete and current is None:
                    raise NotFound(f"session {session_id!r} has no pin {p.key!r}", field=f"pins[{i}].key")
                if current != expected:
                    raise version_conflict(p.key, current, expected, f"pins[{i}].expected_version", candidate)
        self.db.read(work)

    @staticmethod
    def _episodes(session_id: str, turn: TurnIn) -> list[EpisodeIn]:
        """The turn's episodes as the ingest service takes them; an episode without a key gets one derived from the
        session and the turn's key, so a resent turn replays its episodes."""
        salt = hashlib.sha256(f"{session_id}\0{turn.idempotency_key}".encode()).hexdigest()[:32]
        return [EpisodeIn(kind=e.kind, content=e.content, occurred_at=e.occurred_at, session_id=session_id,
                          user_id=turn.user_id, role=e.role, speaker=e.speaker,
                          **({"source": e.source} if e.source_given else {}),   # else by role
                          idempotency_key=e.idempotency_key or f"turn:{salt}:{i}",
                          agent_version=turn.agent_version, prompt_version=turn.prompt_version,
                          tool_version=turn.tool_version) for i, e in enumerate(turn.episodes)]

    def _ingest(self) -> Any:
        try:
            return self.services.ingest
        except (AttributeError, ImportError) as exc:
            raise Unavailable(f"the ingest service is not available: {exc}") from exc

    # ---- compaction ----------------------------------------------------------------------------------------
    def schedule_compaction(self, tenant_id: str, session_id: str) -> cf.Future:
        """Run compaction of the session in the background (one job per session at a time; a request that arrives
        while one runs makes it run again). Returns the job's future."""
        key = (tenant_id, session_id)
        with self._lock:
            job = self._jobs.get(key)
            if job is not None:
                self._again.add(key)
                return job
            job = self._compact_pool.submit(self._compact_job, key)
            self._jobs[key] = job
            return job

    def _compact_job(self, key: tuple[str, str]) -> CompactionResult:
        while True:
            with self._lock:
                self._again.discard(key)
            try:
                info = self.sessions.find(*key)
                result = self.compactor.compact(*key, window_reset_at=info.window_reset_at if info else None)
            except Exception as exc:  # logged and kept; the next turn schedules it again
                log.exception("compaction of session %s failed", key[1])
                result = CompactionResult(reason=f"failed: {type(exc).__name__}: {exc}")
            with self._lock:
                self.last_compaction[key] = result
                # again when asked meanwhile, or when this run folded only part of the older turns (the fold cap)
                if key not in self._again and not (result.summary is not None and result.remaining_episodes):
                    self._jobs.pop(key, None)
                    return result

    def wait_for_compaction(self, tenant_id: str, session_id: str, timeout_s: float = 60.0) -> CompactionResult | None:
        """Block until no compaction of the session is pending (tests, shutdown). Returns the last result, if any.
        Raises `TimeoutError` after `timeout_s` seconds."""
        deadline = time.monotonic() + timeout_s
        key = (tenant_id, session_id)
        while True:
            with self._lock:
                job = self._jobs.get(key)
            if job is None:
                return self.last_compaction.get(key)
            job.result(timeout=max(0.0, deadline - time.monotonic()))

    def rollback_summary(self, tenant_id: str, session_id: str) -> Summary | None:
        """Roll back the session's current summary revision (`Summaries.rollback`: the revision now current, or
        None). Raises `Conflict` (field `session_id`) for a session past retention but kept under a legal hold
        (`Sweeper.refuse_held_sessions`), `NotFound` (field `session_id`) when it has no active summary."""
        require_tenant(tenant_id)
        self.services.governance.sweeper.refuse_held_sessions(tenant_id, [session_id], utcnow())
        return self.summaries.rollback(tenant_id, session_id)

    def compact_now(self, tenant_id: str, session_id: str, *, force: bool = False) -> CompactionResult:
        """Compact synchronously (admin and tests); `force` compacts even below the threshold. Raises `Conflict`
        (field `session_id`) for a session past retention but kept under a legal hold (`Sweeper.refuse_held_sessions`),
        `NotFound` (field `session_id`) for one this tenant does not have."""
        require_tenant(tenant_id)
        self.services.governance.sweeper.refuse_held_sessions(tenant_id, [session_id], utcnow())
        info = self.sessions.get(tenant_id, session_id)
        return self.compactor.compact(tenant_id, session_id, force=force, window_reset_at=info.window_reset_at)


class _ReceiptTaken(Exception):
    """Raised inside a turn's write transaction (rolling it back) when another try of the turn's key recorded its
    receipt first; carries that receipt."""

    def __init__(self, receipt: dict[str, Any]):
        super().__init__("turn receipt recorded by a concurrent try")
        self.receipt = receipt


@contextlib.contextmanager
def _turn_fields(turn: TurnIn) -> Iterator[None]:
    """A turn's episodes carry the turn's `user_id`: an episode refused for its session's user (`episodes[i].user_id`,
    when another user created or claimed the session since the turn's first check) is the turn's field `user_id`.
    An episode sent without a key has one derived from the turn's (`ContextService._episodes`): its key taken by an
    episode past retention kept under a legal hold (`Conflict`, `episodes[i].idempotency_key`) is the turn's field
    `idempotency_key`; one the caller sent stays the item's."""
    try:
        yield
    except InvalidInput as exc:
        if exc.field and exc.field.startswith("episodes[") and exc.field.endswith("].user_id"):
            raise InvalidInput(exc.detail, field="user_id") from None
        raise
    except Conflict as exc:
        index = re.fullmatch(r"episodes\[(\d+)\]\.idempotency_key", exc.field or "")
        if index is not None and turn.episodes[int(index[1])].idempotency_key is None:
            raise Conflict(exc.detail, field="idempotency_key") from None
        raise


def _differ(fields: list[str]) -> str:
    """The words of a 422 naming the `fields` of a turn that differ from the turn sent before under its key."""
    return f"{', '.join(fields)} {'differs' if len(fields) == 1 else 'differ'} from the turn sent under it"


def turn_fingerprint(turn: TurnIn, legacy: bool = False) -> str:
    """SHA-256 (hex) of the turn as sent, without its episodes' `occurred_at` (a retry may stamp them anew): what
    makes a turn sent again under its idempotency key the same turn. `legacy`: as stored before an episode's
    `source` defaulted by role (it defaulted to user_explicit), so that a turn stored then replays."""
    body = turn.model_dump(mode="json", exclude={"episodes": {"__all__": {"occurred_at"}}})
    if legacy:
        for sent, dumped in zip(turn.episodes, body["episodes"]):
            if not sent.source_given:
                dumped["source"] = "user_explicit"
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def turn_field_fingerprints(turn: TurnIn) -> dict[str, str]:
    """Top-level field of the turn as sent -> SHA-256 (hex) of its value, on the body `turn_fingerprint` hashes
    (episodes without `occurred_at`): kept with the turn's receipt so that a 422 for a key resent with another body
    names the fields that differ (`agent_version`, `episodes` ...)."""
    body = turn.model_dump(mode="json", exclude={"episodes": {"__all__": {"occurred_at"}}})
    return {name: hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()
            for name, value in body.items()}


def build(services: Any) -> ContextService:
    """`Services` factory (`services.context`)."""
    return ContextService(services)
