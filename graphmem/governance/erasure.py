"""The erasure cascade: forget a user, a session, an episode or a fact, following provenance.

One forget call is one transaction (all or nothing), unless the user or session holds more episode content than
`settings.erasure_step_chars` (10M characters): then its episodes go first in steps of that size, each a transaction of
its own erasing those episodes as forgetting them one by one would (with its own audit record), and the last
transaction takes the rest as below (`Eraser.forget`; Neo4j holds what a transaction deletes in its transaction
memory). Every step refuses what the whole erasure would for a legal hold; the receipt sums the steps (a fact one
keeps and a later one deletes counts in `facts_kept` and `facts`). For the episodes it erases:
- a fact derived only from erased episodes is deleted (node, edges, embedding); a fact another surviving
  episode also supports (an assertion or confirmation edge) stays, without the erased provenance edges;
- supersession is repaired as if the erased facts had never been asserted (`plan_repairs`);
- summaries covering erased episodes, and every later revision of them, are deleted (not recomputed);
- the CRM clears they recorded (`(Entity)-[:CLEARED]->(Episode)`, `graphmem.store.facts.record_clear`) go with
  the episode nodes (DETACH DELETE), so a value arriving later is no longer ended by them;
- pins of erased sessions and pins set by erased episodes (a kept session forgets the values deleted from its pins
  that the erased text holds, `_undismiss`, and no other), Refusal records of erased episodes, turn receipts
  of erased sessions (or naming an erased episode), and the Session nodes of erased sessions are deleted; NEXT chains of surviving sessions are relinked;
- entities left with no facts and no mentions are deleted with their Alias and ExternalId nodes; an entity that
  stays loses the attributes (aliases, external ids, email, domain, summary) that only erased episodes declared
  (DECLARED edges, `graphmem.store.entities.resolve`), and its search text and embedding are rebuilt without them;
  one whose name only erased episodes declared is renamed (to a kept alias, else an external id, email, domain or
  a placeholder) and the statements graphmem generated from the old name are written again.
Forgetting a user also deletes the user's own entity (external id "user:<user_id>") and every fact about it,
and the user's Consent record. A user deleting one fact from their memories (`forget(fact_id=..., for_user=...)`)
has it go as forgetting the user would take it, nothing else changing: erased, or, when another episode still
supports it, only unlinked from the user's episodes (`Eraser._unlink`).

The sweeper uses the same cascade in "expire" mode: expired episodes go, but the facts they support live on
under their own TTL (their provenance edges go; `expired_source_count` records how many), the pins the agent set
from them stay with their session (which has its own TTL) while the pin candidates compaction proposed from them
(unconfirmed) go with them, and an expired fact is deleted without re-opening what it superseded.
See docs/governance.md.
"""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime
from typing import Literal, NamedTuple

from graphmem.context.compaction import dismissed_in
from graphmem.errors import InvalidInput, NotFound, Refused
from graphmem.governance import audit
from graphmem.governance.models import ERASURE_KINDS, Receipt, TargetKind, every_kind
from graphmem.graph import TemporalGraph
from graphmem.identifiers import blank
from graphmem.models import BLANK_WORDS
from graphmem.store import Database, require_tenant
from graphmem.store.db import Tx
from graphmem.store.entities import alias_key, name_key
from graphmem.store.fulltext import search_terms
from graphmem.temporal import SOURCE_RANK
from graphmem.timeutil import to_utc, utcnow

USER_KEY = "user:{}"
"""External-id key that marks a user's own entity (EntityRef.external_ids=["user:<user_id>"])."""

Mode = Literal["erase", "expire"]


def _native(v):
    return v.to_native() if hasattr(v, "to_native") else v


class End(NamedTuple):
    """The end a surviving fact inherits from an erased run (`plan_repairs`): `valid_to` (None: current again) and,
    when the run ended in a retraction, that status and its `value_retraction` flag, so a late value inside the
    interval still ends where the retraction said (graphmem.temporal.decide)."""

    valid_to: datetime | None
    status: str = "closed"
    value_retraction: bool = False


def plan_repairs(deleted: set[str], around: list[dict]) -> tuple[dict[str, End], set[tuple[str, str]]]:
    """Supersession repair when the facts `deleted` are erased: make each timeline what it would have been had
    they never been asserted.

    `around`: one dict per deleted fact {id, valid_from, valid_to, stated_valid_to, status, value_retraction,
    newers: [ids superseding it], olders: [{id, valid_from, valid_to, status, stated_valid_to, prior_valid_to,
    prior_status, retraction_valid_to, retraction_value, superseders: [ids],
    next: {id, valid_from} or None}]}
    (cypher governance/supersession_around).
    A surviving older fact O that a deleted fact D closed (O.status 'closed', O.valid_to == D.valid_from) and
    that nothing surviving supersedes inherits the end of the erased run: walking up from D through deleted
    superseders to the last one T, O.valid_to := T.valid_to (None re-opens O as current) and the first surviving
    fact N that superseded T now supersedes O. An end T's own assertion stated (`stated_valid_to`, no
    retraction) says nothing of O, which then has no inherited end (a surviving N that starts after that end is
    `next`, below, and bounds O). O never ends later than its
    own assertion stated, nor than a retraction that had ended it before D closed it again (`prior_status`
    'retracted': that end and status come back), nor later than the start of `next`, the first surviving fact of
    its timeline after it, which then supersedes it (a run that ended where it said, followed by a later value,
    leaves O running up to that value). Retracted and corrected facts are never re-opened (a correction
    said the value was wrong; a retraction ended it).

    Returns ({older_id: its `End`}, {(newer_id, older_id) links to add}).
    """
    info = {d["id"]: d for d in around}
    ends: dict[str, End] = {}
    links: set[tuple[str, str]] = set()
    for d in around:
        for o in d["olders"]:
            if o["id"] in deleted or any(n not in deleted for n in o["superseders"]):
                continue
            if o["status"] != "closed" or _native(o["valid_to"]) != _native(d["valid_from"]):
                continue
            top, newer, seen = d, None, {d["id"]}
            while True:
                alive = [n for n in top["newers"] if n not in deleted]
                if alive:
                    newer = sorted(alive)[0]
                    break
                dead = [n for n in top["newers"] if n in info and n not in seen]
                if not dead:
                    break
                seen.add(dead[0])
                top = info[dead[0]]
            end = _native(top["valid_to"])
            retracted = end is not None and top["status"] == "retracted"
            inherited = End(end, "retracted", bool(top.get("value_retraction"))) if retracted else End(end)
            if not retracted and end is not None and _native(top.get("stated_valid_to")) == end:
                inherited = End(None)      # the erased run ended where it said it would (`next` bounds O)
            nxt = o.get("next")
            following = [End(_native(nxt["valid_from"]))] if nxt else []
            end = min([inherited, *_own_ends(o), *following], key=_later_is_none)
            if (end.valid_to, end.status) != (_native(o["valid_to"]), o["status"]):   # else it keeps what it has
                ends[o["id"]] = end
            if nxt and end.valid_to == _native(nxt["valid_from"]):
                newer = nxt["id"]        # the value that follows now closes it (ties: the timeline's own fact)
            if newer:
                links.add((newer, o["id"]))
    return ends, links


def _own_ends(o: dict) -> list[End]:
    """The ends surviving fact `o` has of its own: the end its assertion stated, and the end a retraction gave it
    before a later-erased fact closed it again (kept by facts/close_batch through every later close as
    retraction_valid_to / retraction_value; a fact closed again before those were kept has it as prior_valid_to
    with prior_status 'retracted', its flag unknown)."""
    out = []
    if o.get("stated_valid_to") is not None:
        out.append(End(_native(o["stated_valid_to"])))
    if o.get("retraction_valid_to") is not None:
        out.append(End(_native(o["retraction_valid_to"]), "retracted", bool(o.get("retraction_value"))))
    elif o.get("prior_status") == "retracted" and o.get("prior_valid_to") is not None:
        out.append(End(_native(o["prior_valid_to"]), "retracted"))
    return out


def unsay_ends(rows: list[dict], episodes: set[str], reopen: bool) -> tuple[dict[str, End], list[dict]]:
    """The stated ends that go with erased (or expired) `episodes`: `rows` of governance/stated_ends, one per fact
    that stays and whose end one of them stated (`ended_by` / `ended_to`, facts/create_batch, facts/close_batch).

    Each fact loses those episodes' entries. With `reopen` (erasure: the timeline as it would have been without
    them), a closed fact whose end (`valid_to`) only erased episodes stated ends instead where what remains says:
    the earliest end a kept episode stated after its start, else the start of the next fact of its timeline
    (`next_from`), else nowhere (current again); never past the end a retraction gave it (`retraction_valid_to`).
    A retracted fact keeps its end (a retraction is not a stated end), and so does a fact closed by a later value.
    Its `stated_valid_to`, when it was an erased end, becomes the earliest kept one (or none). Expiry (`reopen`
    False) changes no end: the facts the expired episodes gave live on as they were, with the ends they carry.

    Returns ({fact id: its new `End`} for governance/repair_facts, governance/set_stated_ends rows:
    [{id, ended_by, ended_to (ISO 8601), stated_valid_to (ISO 8601 or None)}])."""
    ends: dict[str, End] = {}
    lists = []
    for r in rows:
        said = list(zip(r["ended_by"] or [], [_native(t) for t in r["ended_to"] or []]))
        kept = [(b, t) for b, t in said if b not in episodes]
        kept_ends = {t for _, t in kept}
        erased = {t for b, t in said if b in episodes} - kept_ends
        stated = _native(r["stated_valid_to"])
        if reopen and stated in erased:
            stated = min(kept_ends, default=None)
        lists.append({"id": r["id"], "ended_by": [b for b, _ in kept], "ended_to": [t.isoformat() for _, t in kept],
                      "stated_valid_to": stated.isoformat() if stated else None})
        valid_to = _native(r["valid_to"])
        if not reopen or r["status"] != "closed" or valid_to not in erased:
            continue
        start = _native(r["valid_from"])
        options = [End(t) for t in kept_ends if t > start]
        if r.get("next_from") is not None:
            options.append(End(_native(r["next_from"])))
        if r.get("retraction_valid_to") is not None:
            options.append(End(_native(r["retraction_valid_to"]), "retracted", bool(r.get("retraction_value"))))
        end = min(options, key=_later_is_none, default=End(None))
        if end.valid_to != valid_to:
            ends[r["id"]] = end
    return ends, lists


def _rebelieve(tx: Tx, t: dict, ids: list[str]) -> None:
    """Facts `ids` lost provenance to an erasure: each believes again what its remaining assertions support, the
    highest-ranked source and the highest confidence among them (as `graphmem.temporal` strengthens a fact: a
    user's restatement erased leaves an inferred fact inferred, and a later inference may replace it again)."""
    rows = []
    for r in tx.rows("governance/beliefs", **t, ids=ids):
        support = [s for s in r["support"] if s["source"] is not None]
        if not support:
            continue
        top = max(SOURCE_RANK.get(s["source"], 0) for s in support)
        sources = sorted({s["source"] for s in support if SOURCE_RANK.get(s["source"], 0) == top})
        source = r["source"] if r["source"] in sources else sources[0]   # a tie keeps what the fact says
        confidence = max(s["confidence"] for s in support)
        if (source, confidence) != (r["source"], r["confidence"]):
            rows.append({"id": r["id"], "source": source, "confidence": confidence})
    if rows:
        tx.run("facts/strengthen", **t, rows=rows)


def _later_is_none(e: End) -> tuple[bool, datetime | None]:
    """Sort key of ends: earliest first, no end (None) last."""
    return (e.valid_to is None, e.valid_to)


def steps(rows: list[dict], budget: int) -> list[list[dict]]:
    """Split episodes `rows` ({id, session_id, chars}, in the order governance/episode_sizes gives: by session, then
    occurred_at) into consecutive steps of at most `budget` characters of content; an episode longer than `budget`
    is a step of its own. [] for no rows."""
    out: list[list[dict]] = []
    size = 0
    for r in rows:
        if not out or size + r["chars"] > budget:
            out.append([])
            size = 0
        out[-1].append(r)
        size += r["chars"]
    return out


class Eraser:
    """Runs the cascade. `forget` is the user-facing erasure; `expire` is the sweeper's variant."""

    def __init__(self, db: Database, graph: TemporalGraph):
        self.db, self.graph = db, graph

    def steps(self, runner: Tx | Database, tenant_id: str, episode_ids: list[str]) -> list[list[dict]]:
        """`episode_ids` (those the tenant still has) in steps of at most `settings.erasure_step_chars` characters
        of content (`steps`): rows {id, session_id, chars}, by session, then occurred_at. One read
        (governance/episode_sizes) through `runner`, a transaction or the database."""
        if not episode_ids:
            return []
        rows = runner.rows("governance/episode_sizes", tenant_id=tenant_id, ids=episode_ids)
        return steps(rows, self.graph.settings.erasure_step_chars)

    # ---- public -----------------------------------------------------------------------------
    def forget(self, tenant_id: str, *, user_id: str | None = None, session_id: str | None = None,
               episode_id: str | None = None, fact_id: str | None = None, actor: str | None = None,
               now: datetime | None = None, action: Literal["forget", "reject"] = "forget",
               for_user: str | None = None) -> Receipt:
        """Erase exactly one target and everything derived only from it; write an audit record.

        `for_user` (with `fact_id` only): the user deleting the fact from their memories (`Memories.delete`,
        `Memories.reject`). The fact then goes as forgetting that user would take it, and nothing else changes: a
        fact about the user's own entity (external id "user:<user_id>"), or one no episode outside the user's
        supports (an assertion or confirmation edge), is erased as `fact_id` alone erases it; one another episode
        still supports stays, and only the user's provenance goes (`_unlink`: the edges from the user's episodes, the
        ends and later starts they stated of it, its belief recomputed from what remains; counted `facts_kept`).
        The user's episodes stay, as they do when a fact is forgotten.

        A user or session with more episode content than `settings.erasure_step_chars` is erased in steps (module
        docstring): the receipt sums them (so it counts what early steps changed in what then remained) and names
        the last step's audit record; a failure (a hold placed meanwhile,
        Neo4j down) leaves the steps before it done, each complete, and forgetting the target again finishes it.

        Raises `InvalidInput` (not exactly one target, empty id, `for_user` without `fact_id` or empty),
        `NotFound` (no such session, episode or fact; a user with nothing stored is not an error: the receipt
        counts zeros), `Refused` naming the field when a legal hold covers the target or something the cascade
        would delete or change (with `for_user`, a hold on the user or on one of their episodes the fact cites).
        """
        require_tenant(tenant_id)
        given = {k: v for k, v in (("user_id", user_id), ("session_id", session_id), ("episode_id", episode_id),
                                   ("fact_id", fact_id)) if v is not None}
        if len(given) != 1:
            raise InvalidInput("give exactly one of user_id, session_id, episode_id or fact_id",
                               field=next(iter(given), "user_id"))
        field, target = next(iter(given.items()))
        if not isinstance(target, str) or blank(target):
            raise InvalidInput(f"{field} {BLANK_WORDS}", field=field)
        if for_user is not None and (field != "fact_id" or not isinstance(for_user, str) or blank(for_user)):
            raise InvalidInput("for_user is a user id and goes with fact_id only", field="user_id")
        kind: TargetKind = field.removesuffix("_id")  # type: ignore[assignment]
        now = to_utc(now, "now") if now else utcnow()

        before: Counter = Counter()
        if kind in ("user", "session"):
            for step in self.steps(self.db, tenant_id, self._scope(self.db, tenant_id, kind, target)[1])[:-1]:
                ids = [r["id"] for r in step]
                before.update(self.db.write(lambda tx: self._step(tx, tenant_id, kind, target, field, ids, now,
                                                                  action, actor)))

        def work(tx: Tx) -> Receipt:
            counts = (self._forget_tx(tx, tenant_id, kind, target, field, now) if for_user is None else
                      self._forget_user_fact(tx, tenant_id, for_user, target, field, now))
            rec = audit.write(tx, tenant_id, action, kind, target, counts, now, actor)
            return Receipt(action=action, target_kind=kind, counts=every_kind(ERASURE_KINDS, before + Counter(counts)),
                           at=now, audit_id=rec.id)
        return self.db.write(work)

    def _step(self, tx: Tx, tenant_id: str, kind: TargetKind, target: str, field: str, episodes: list[str],
              now: datetime, action: str, actor: str | None) -> Counter:
        """One early step of a large user or session erasure (`forget`): under the hold checks of the whole target
        (holds on the user, their sessions and episodes, and on episodes supporting the facts about the user's own
        entity, which the last step deletes), the cascade of `episodes` (those still the target's) as forgetting
        them would run it, audited. Returns its counts."""
        sessions, scope, entities = (user_scope(tx, tenant_id, target) if kind == "user" else
                                     (*self._scope(tx, tenant_id, kind, target), []))
        _refuse_held(tx, tenant_id, kind, target, sessions, scope, field)
        if entities:   # the facts about the user's own entity, which the last step deletes whatever supports them
            # (helper-found: one a held episode of another user supports was refused only there, after the earlier
            # steps had erased the user's first episodes)
            _refuse_held_facts(tx, tenant_id, self._user_facts(tx, tenant_id, entities), field)
        mine = set(scope)
        counts = self._cascade(tx, tenant_id, "erase", [e for e in episodes if e in mine], [], [], [], now,
                               field=field)
        audit.write(tx, tenant_id, action, kind, target, every_kind(ERASURE_KINDS, counts), now, actor)
        return counts

    @staticmethod
    def _scope(runner: Tx | Database, tenant_id: str, kind: TargetKind, target: str) -> tuple[list[str], list[str]]:
        """(session ids, episode ids) a user or session erasure covers (`user_scope`, governance/target_episodes)."""
        if kind == "user":
            return user_scope(runner, tenant_id, target)[:2]
        row = runner.one("governance/target_episodes", tenant_id=tenant_id, user_id=None, session_id=target,
                         episode_ids=[])
        return row["sessions"], row["episodes"]

    @staticmethod
    def _user_facts(tx: Tx, tenant_id: str, entity_ids: list[str]) -> list[str]:
        """The ids of the facts about a user's own entities `entity_ids` (forgetting the user deletes them all)."""
        return [r["id"] for r in tx.rows("governance/facts_of_entities", tenant_id=tenant_id, entity_ids=entity_ids)]

    def _names(self, tenant_id: str, flag: Literal["single_valued", "symmetric"]) -> list[str]:
        """The names of the tenant's predicates that are `flag` (single-valued, or symmetric)."""
        return [p.name for p in self.graph.ontology(tenant_id).predicates.values() if getattr(p, flag)]

    def expire(self, tx: Tx, tenant_id: str, *, episode_ids: Iterable[str] = (), session_ids: Iterable[str] = (),
               fact_ids: Iterable[str] = (), now: datetime) -> Counter:
        """The sweeper's cascade inside `tx` (callers select only unheld, expired records). Returns counts."""
        return self._cascade(tx, tenant_id, "expire", list(episode_ids), list(session_ids), list(fact_ids), [], now)

    # ---- the cascade ------------------------------------------------------------------------
    def _forget_user_fact(self, tx: Tx, tenant_id: str, user_id: str, fact_id: str, field: str,
                          now: datetime) -> dict[str, int]:
        """`forget(fact_id=..., for_user=...)` inside `tx`. Whether another episode supports the fact is read again
        once the user's episodes it cites and its subject (a symmetric fact's object too) are locked, in the order
        every fact write and erasure takes them: a concurrent write adding provenance, or erasure removing some,
        commits first and is seen."""
        t = {"tenant_id": tenant_id}
        _, episodes, entities = user_scope(tx, tenant_id, user_id)

        def support() -> dict:
            row = tx.one("governance/user_fact_support", **t, fact_id=fact_id, episode_ids=episodes,
                         entity_ids=entities)
            if row is None:
                raise NotFound(f"no fact {fact_id!r}", field=field)
            return row
        tx.rows("episodes/lock_many", **t, ids=sorted(support()["own"]))
        tx.one("governance/lock_fact_subjects", **t, ids=[fact_id], symmetric=self._names(tenant_id, "symmetric"))
        row = support()
        if not row["about_user"] and not row["own"]:   # a concurrent deletion of the user's took their word off
            raise NotFound(f"user {user_id!r} has no fact {fact_id!r}", field=field)   # it first: not theirs
        # forgetting the user is refused under a hold on them, so is taking a fact of theirs (one about them too)
        held = tx.rows("governance/holds_on", **t, user_ids=[user_id], session_ids=[], episode_ids=sorted(row["own"]))
        if held:
            raise Refused(f"fact {fact_id} is user {user_id}'s, under legal hold ({held[0]['target_kind']} hold); "
                          "release the hold before deleting it", field=field)
        if row["about_user"] or not row["supported"]:
            return self._forget_tx(tx, tenant_id, "fact", fact_id, field, now)
        return self._unlink(tx, tenant_id, fact_id, sorted(row["own"]), now)

    def _unlink(self, tx: Tx, tenant_id: str, fact_id: str, episodes: list[str], now: datetime) -> dict[str, int]:
        """Take the provenance of a user's `episodes` off fact `fact_id`, which another episode still supports:
        what forgetting the user does to such a fact (`_cascade`, "shared provenance"), the episodes kept. The caller
        (`_forget_user_fact`) has refused it under a hold on the user or one of those episodes. Returns the
        receipt's counts."""
        t = {"tenant_id": tenant_id}
        counts: Counter = Counter(facts_kept=1)
        _unsay(tx, t, self._names(tenant_id, "single_valued"), episodes, [], now, counts, reopen=True, only=fact_id)
        tx.run("governance/drop_restatements", **t, ids=[fact_id], episode_ids=episodes)
        tx.one("governance/unlink_provenance", **t, fact_id=fact_id, episode_ids=episodes)
        _rebelieve(tx, t, [fact_id])
        return every_kind(ERASURE_KINDS, counts)

    def _forget_tx(self, tx: Tx, tenant_id: str, kind: str, target: str, field: str, now: datetime) -> dict[str, int]:
        entity_ids: list[str] = []
        fact_ids: list[str] = []
        if kind == "fact":
            if tx.one("facts/get", tenant_id=tenant_id, id=target, now=None) is None:
                raise NotFound(f"no fact {target!r}", field=field)
            if tx.rows("governance/held_facts", tenant_id=tenant_id, ids=[target]):
                raise Refused(f"fact {target} is supported by an episode under legal hold", field=field)
            sessions, episodes, fact_ids = [], [], [target]
        else:
            if kind == "user":
                sessions, episodes, entity_ids = user_scope(tx, tenant_id, target)
                fact_ids = self._user_facts(tx, tenant_id, entity_ids)
            elif kind == "session":
                sessions, episodes = self._scope(tx, tenant_id, kind, target)
                if not sessions and not episodes:
                    raise NotFound(f"no session {target!r}", field=field)
            else:
                episodes = tx.one("governance/target_episodes", tenant_id=tenant_id, user_id=None, session_id=None,
                                  episode_ids=[target])["episodes"]
                sessions = []
                if not episodes:
                    raise NotFound(f"no episode {target!r}", field=field)
            _refuse_held(tx, tenant_id, kind, target, sessions, episodes, field)
        counts = self._cascade(tx, tenant_id, "erase", episodes, sessions, fact_ids, entity_ids, now, field=field)
        if kind == "user":
            counts["consents"] = tx.one("governance/delete_user_consent", tenant_id=tenant_id,
                                        subject=USER_KEY.format(target))["deleted"]
        return every_kind(ERASURE_KINDS, counts)

    def _cascade(self, tx: Tx, tenant_id: str, mode: Mode, episodes: list[str], sessions: list[str],
                 forced_facts: list[str], forced_entities: list[str], now: datetime, field: str = "") -> Counter:
        counts: Counter = Counter()
        t = {"tenant_id": tenant_id}
        if episodes:   # before reading what they support: a fact write citing one waits, or finds it gone
            tx.rows("episodes/lock_many", **t, ids=sorted(episodes))
        derived = tx.rows("governance/facts_of_episodes", **t, episode_ids=episodes) if episodes else []
        if derived:   # whether another episode supports each: read again once their timelines are locked, so a
            # write that adds provenance to one (or another erasure that removes it) commits first and is seen
            tx.one("governance/lock_fact_subjects", **t, ids=sorted(r["id"] for r in derived),
                   symmetric=self._names(tenant_id, "symmetric"))
            derived = tx.rows("governance/facts_of_episodes", **t, episode_ids=episodes)
        delete = set(forced_facts)
        if mode == "erase":
            delete |= {r["id"] for r in derived if not r["supported"]}
            counts["facts_kept"] = sum(1 for r in derived if r["supported"] and r["id"] not in delete)
            _refuse_held_facts(tx, tenant_id, sorted(delete), field or "fact_id")
        elif episodes:
            counts["facts_kept"] = tx.one("governance/note_expired_provenance", **t, episode_ids=episodes)["noted"]
        delete_ids = sorted(delete)
        symmetric: list[str] = []
        predicates = self.graph.ontology(tenant_id).predicates.values() if delete_ids else []   # read once
        if delete_ids:   # the timelines' subjects first: the repair below reads what a concurrent erasure left
            symmetric = [p.name for p in predicates if p.symmetric]
            tx.one("governance/lock_fact_subjects", **t, ids=delete_ids, symmetric=symmetric)

        candidates = tx.one("governance/mentioned_entities", **t, episode_ids=episodes, fact_ids=delete_ids)["ids"]
        ends, links = {}, set()
        if mode == "erase" and delete_ids:
            single = [p.name for p in predicates if p.single_valued]
            around = tx.rows("governance/supersession_around", **t, ids=delete_ids, single_valued=single,
                             symmetric=symmetric)
            ends, links = plan_repairs(delete, around)
        surviving_sessions = []
        if episodes:
            touched = tx.one("governance/sessions_of_episodes", **t, ids=episodes)["sessions"]
            surviving_sessions = sorted(set(touched) - set(sessions))
            counts["summaries"] = tx.one("governance/delete_summaries", **t, episode_ids=episodes,
                                         session_ids=sessions)["deleted"]
            counts["refusals"] = tx.one("governance/delete_refusals", **t, episode_ids=episodes)["deleted"]
        if episodes or sessions:
            counts["turn_receipts"] = tx.one("governance/delete_turn_receipts", **t, session_ids=sessions,
                                             touched_sessions=surviving_sessions, episode_ids=episodes)["deleted"]
        if episodes or sessions:   # expiry is not erasure: a pin the agent wrote from an expired turn stays with its
            # live session; a candidate compaction proposed from it (nobody confirmed it) goes with the turn
            erased, expired = (episodes, []) if mode == "erase" else ([], episodes)
            counts["pins"] = tx.one("governance/delete_pins", **t, session_ids=sessions, episode_ids=erased,
                                    candidate_episode_ids=expired)["deleted"]
        if mode == "erase" and surviving_sessions:   # before the episodes and facts go: their text is read
            _undismiss(tx, t, surviving_sessions, episodes, delete_ids)
        if delete_ids:
            counts["facts"] = tx.one("governance/delete_facts", **t, ids=delete_ids)["deleted"]
        _repair(tx, t, now, ends, counts)
        if links:
            tx.run("facts/link_supersedes", **t, now=now, rows=[{"newer": n, "older": o} for n, o in sorted(links)])
            counts["links_repaired"] = len(links)
        if episodes:   # the ends these episodes stated of the facts that stay go with them (`unsay_ends`)
            _unsay(tx, t, self._names(tenant_id, "single_valued"), episodes, delete_ids, now, counts,
                   reopen=mode == "erase")
        declared = []   # what only the erased episodes declared: read while their DECLARED edges exist
        if mode == "erase" and episodes:
            declared = tx.rows("governance/declared_only_by", **t, episode_ids=episodes)
        if episodes:
            kept = sorted({r["id"] for r in derived} - delete)
            if kept:   # the later starts these episodes said the kept facts' values from go too (facts.py)
                tx.run("governance/drop_restatements", **t, ids=kept, episode_ids=episodes)
            counts["episodes"] = tx.one("governance/delete_episodes", **t, ids=episodes)["deleted"]
            if mode == "erase" and kept:
                _rebelieve(tx, t, kept)
        if sessions:
            counts["sessions"] = tx.one("governance/delete_sessions", **t, ids=sessions)["deleted"]
        if surviving_sessions:
            tx.run("governance/relink_sessions", **t, session_ids=surviving_sessions)
        for ids, force in ((forced_entities, True), (sorted(set(candidates) - set(forced_entities)), False)):
            if ids:
                r = tx.one("governance/delete_entities", **t, ids=ids, force=force)
                for k in ("entities", "aliases", "external_ids"):
                    counts[k] += r[k]
        if declared:
            stripped = _strip(tx, tenant_id, declared, now, self.graph)
            for k in ("aliases", "external_ids", "entities_renamed"):
                counts[k] += stripped[k]
        return Counter({k: v for k, v in counts.items() if v})


def _refuse_held(tx: Tx, tenant_id: str, kind: TargetKind, target: str, sessions: list[str], episodes: list[str],
                 field: str) -> None:
    """Raise `Refused` (naming `field`) when a legal hold covers the user `target` (kind "user"), one of `sessions`
    or one of `episodes` (governance/holds_on)."""
    held = tx.rows("governance/holds_on", tenant_id=tenant_id, user_ids=[target] if kind == "user" else [],
                   session_ids=sessions, episode_ids=episodes)
    if held:
        raise Refused(f"{kind} {target} is under legal hold ({held[0]['target_kind']} hold); release the hold "
                      f"before erasing", field=field)


def _refuse_held_facts(tx: Tx, tenant_id: str, fact_ids: list[str], field: str) -> None:
    """Raise `Refused` (naming `field`) when an episode under legal hold supports one of `fact_ids`, which an
    erasure would delete (governance/held_facts)."""
    held = tx.rows("governance/held_facts", tenant_id=tenant_id, ids=fact_ids) if fact_ids else []
    if held:
        raise Refused(f"fact {held[0]['id']} that this erasure would delete is supported by an episode under legal "
                      f"hold", field=field)


def _unsay(tx: Tx, t: dict, single_valued: list[str], episodes: list[str], deleted: list[str], now: datetime,
           counts: Counter, *, reopen: bool, only: str | None = None) -> None:
    """Take the ends `episodes` stated off the facts that stay (not in `deleted`; with `only`, off that fact alone),
    and with `reopen` (erasure) give each closed fact whose end only they stated the end what remains says
    (`unsay_ends`, governance/stated_ends, governance/set_stated_ends, `_repair`, which adds to `counts`).
    `single_valued`: the tenant's single-valued predicate names."""
    said = tx.rows("governance/stated_ends", **t, episode_ids=episodes, deleted=deleted, single_valued=single_valued)
    if only is not None:
        said = [r for r in said if r["id"] == only]
    unsaid, lists = unsay_ends(said, set(episodes), reopen=reopen)
    if lists:
        tx.run("governance/set_stated_ends", **t, rows=lists)
    _repair(tx, t, now, unsaid, counts)


def user_scope(runner: Tx | Database, tenant_id: str, user_id: str) -> tuple[list[str], list[str], list[str]]:
    """(session ids, episode ids, own entity ids) of user `user_id`: the user's sessions, the episodes of those
    sessions and those with that `user_id` (governance/target_episodes), and the entities carrying the external id
    "user:<user_id>". `runner`: a transaction or the database (both answer `one` and `rows`)."""
    row = runner.one("governance/target_episodes", tenant_id=tenant_id, user_id=user_id, session_id=None,
                     episode_ids=[])
    entities = [r["id"] for r in runner.rows("governance/user_entities", tenant_id=tenant_id,
                                             key=USER_KEY.format(user_id))]
    return row["sessions"], row["episodes"], entities


def _repair(tx: Tx, t: dict, now: datetime, ends: dict[str, End], counts: Counter) -> None:
    """Give each fact of `ends` (fact id -> its new `End`) that end (governance/repair_facts), adding to `counts`
    how many were re-opened (`facts_reopened`) and given another end (`facts_extended`)."""
    if not ends:
        return
    tx.run("governance/repair_facts", **t, now=now, rows=[
        {"id": k, "valid_to": e.valid_to.isoformat() if e.valid_to else None, "status": e.status,
         "value_retraction": e.value_retraction} for k, e in ends.items()])
    counts["facts_reopened"] += sum(1 for e in ends.values() if e.valid_to is None)
    counts["facts_extended"] += sum(1 for e in ends.values() if e.valid_to is not None)


def _undismiss(tx: Tx, t: dict, sessions: list[str], episodes: list[str], fact_ids: list[str]) -> None:
    """The kept `sessions` forget the pin values deleted from them (`dismissed_pins`, cypher pins/delete) that the
    erased text holds (`graphmem.context.compaction.dismissed_in`: the content of `episodes`, the statements of
    `fact_ids`, read before they go): a dismissal may have come from those words. Every other dismissal stays, so
    compaction still proposes no deleted pin again. The sessions are locked first: a pin delete either commits
    before (its value is read) or waits for the erasure."""
    held = tx.rows("governance/lock_dismissals", **t, session_ids=sorted(sessions))
    dismissed = {d for r in held for d in r["dismissed"]}
    if not dismissed:
        return
    texts = tx.one("governance/erased_text", **t, episode_ids=episodes, fact_ids=fact_ids)["texts"]
    gone = dismissed_in(texts, dismissed)
    if gone:
        tx.run("governance/undismiss_pins", **t, session_ids=[r["id"] for r in held], values=sorted(gone))


def _strip(tx: Tx, tenant_id: str, declared: list[dict], now: datetime, graph: TemporalGraph) -> Counter:
    """Strip from the surviving entities the attributes that only erased episodes declared (`declared`: rows of
    governance/declared_only_by, read before the episodes went; an entity the cascade deleted is skipped): aliases,
    external ids, email, domain, summary, and the name: an entity whose name no episode left declares is renamed
    (`_new_name`), and the statements of its facts that graphmem made from the old name are written again
    (`_restate`). An entity that lost an alias or its name gets its display names, search text and full-text terms
    rebuilt from its name and the aliases left, and loses its embedding (of the old text), which the worker's
    backfill computes again. Returns the counts `aliases`, `external_ids` (an alias counts once per entity it was
    stripped from) and `entities_renamed`."""
    rows: dict[str, dict] = {}
    for d in declared:
        row = rows.setdefault(d["entity_id"], {"id": d["entity_id"], "alias_keys": [], "external_keys": [],
                                                "name": False, "email": False, "domain": False, "summary": False})
        if d["what"] == "alias":
            row["alias_keys"].append(d["key"])
        elif d["what"] == "external_id":
            row["external_keys"].append(d["key"])
        elif d["what"] in ("name", "email", "domain", "summary"):
            row[d["what"]] = True
    counts: Counter = Counter()
    reindex, renames, names_were = [], [], {}
    for r in tx.rows("governance/strip_attributes", tenant_id=tenant_id, rows=sorted(rows.values(),
                                                                                   key=lambda x: x["id"])):
        counts["aliases"] += r["aliases_stripped"]
        counts["external_ids"] += r["external_ids_stripped"]
        if not (r["aliases_stripped"] or r["rename"]):
            continue
        gone = set(r["stripped_name_keys"])
        aliases = [a for a in r["aliases"] or [] if name_key(a) not in gone]
        name = r["name"]
        if r["rename"]:
            name, source, source_key = _new_name(r, aliases)
            aliases = [a for a in aliases if name_key(a) != name_key(name)]
            renames.append({"id": r["id"], "name": name, "name_key": name_key(name),
                            "alias_key": alias_key(r["kind"], name_key(name)),
                            "old_alias_key": alias_key(r["kind"], name_key(r["name"])),
                            "source": source, "source_key": source_key})
            names_were[r["id"]] = (r["name"], name)
        names = [name, *aliases]
        reindex.append({"id": r["id"], "aliases": aliases, "search_text": " | ".join(names),
                        "search_terms": " ".join(x for x in (search_terms(tenant_id, n) for n in names) if x)})
    if renames:
        tx.run("governance/rename_entities", tenant_id=tenant_id, now=now, rows=renames)
        counts["entities_renamed"] = len(renames)
    if reindex:
        tx.run("governance/reindex_entities", tenant_id=tenant_id, now=now, rows=reindex)
    if renames:
        _restate(tx, tenant_id, names_were, graph)
    return counts


def _new_name(r: dict, aliases: list[str]) -> tuple[str, str, str | None]:
    """The name an entity takes when no episode left declares its own (`r`: a row of governance/strip_attributes,
    `aliases`: the aliases it keeps, in the order it got them): the first alias a kept episode declared, else the
    first alias left (written without an episode); with no alias, a name from what it keeps that says nothing the
    erased episodes said and names nobody by a nickname: its first external id ("crm:contact:c10"), else its
    email, else its domain, else the neutral placeholder "<kind> <first 8 digits of its id>" ("Person 3f2a9c1b").
    Returns (name, source: 'alias', 'external_id', 'email', 'domain' or 'placeholder', the source's key)."""
    declared = set(r["declared_alias_keys"] or [])
    pick = next((a for a in aliases if name_key(a) in declared), None) or next(iter(aliases), None)
    if pick:
        return pick, "alias", alias_key(r["kind"], name_key(pick))
    for k in r["external_ids"] or []:
        if name_key(k):
            return k, "external_id", k
    for attr in ("email", "domain"):
        if r[attr] and name_key(r[attr]):
            return r[attr], attr, None
    return f"{r['kind']} {r['id'][:8]}", "placeholder", None


def _restate(tx: Tx, tenant_id: str, names_were: dict[str, tuple[str, str]], graph: TemporalGraph) -> None:
    """Write again the statements of the facts about the entities an erasure renamed (`names_were`: entity id ->
    (old name, new name)) that graphmem generated from the old names: a statement equal to the predicate's sentence
    of the old subject and object names (or value) becomes the sentence of the new names, with its full-text terms,
    and loses its embedding (the worker embeds it again). A statement the caller gave (`FactIn.statement`, any
    other text) is left as it is."""
    predicates = graph.ontology(tenant_id).predicates
    rows = []
    for f in tx.rows("governance/facts_to_restate", tenant_id=tenant_id, ids=sorted(names_were)):
        p = predicates.get(f["predicate"])
        if p is None:
            continue
        old = {k: names_were.get(f[f"{k}_id"], (f[f"{k}_name"], f[f"{k}_name"])) for k in ("subject", "object")}
        obj_old = old["object"][0] if f["object_id"] else f["value"]
        obj_new = old["object"][1] if f["object_id"] else f["value"]
        if f["statement"] != p.statement(old["subject"][0], obj_old):
            continue
        statement = p.statement(old["subject"][1], obj_new)
        rows.append({"id": f["id"], "statement": statement, "search_terms": search_terms(tenant_id, statement)})
    if rows:
        tx.run("governance/restate_facts", tenant_id=tenant_id, rows=rows)
