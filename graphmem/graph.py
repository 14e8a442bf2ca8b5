"""`TemporalGraph`: the temporal knowledge-graph service (episodes, entities, facts and their reads).

This is the layer the API and the other services call. It validates the tenant, loads the tenant's ontology,
and runs each operation as one transaction through `graphmem.store`. Times are UTC; ids are 32-hex strings.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime

from graphmem.errors import Conflict, InvalidInput
from graphmem.identifiers import blank, value_key
from graphmem.indexer import Indexer
from graphmem.models import (BLANK_WORDS, AssertOutcome, Entity, EntityRef, Episode, EpisodeIn, Fact, FactIn,
                             Provenance)
from graphmem.ontology import LITERAL, Ontology, Predicate
from graphmem.settings import Settings
from graphmem.store import Database, require_tenant
from graphmem.store.db import Tx
from graphmem.store import entities as entity_store
from graphmem.store import episodes as episode_store
from graphmem.store import facts as fact_store
from graphmem.timeutil import to_utc, utcnow
from graphmem.tokens import TokenCounter


WRITTEN = ("created", "superseded", "history")
"""Assertion outcomes that wrote a new fact (a `duplicate` names a fact already held)."""
MAX_PREDICATES = 100
"""How many predicates a read may filter by (a search's `predicates` takes as many)."""


def _meaning(p: Predicate) -> dict[str, object]:
    """What of a predicate decides how its stored facts read: how many values hold at once, whether it holds both
    ways, whether its object is a literal value, an entity or either, and the class that retention and a context
    window's withholding read. Kinds, template and TTL govern only what is written next."""
    entity_object = any(k != LITERAL for k in p.object_kinds)
    return {"cardinality": p.cardinality, "symmetric": p.symmetric, "fact_class": p.fact_class,
            "sensitivity": p.sensitivity, "object_kinds": (LITERAL in p.object_kinds, entity_object)}


class TemporalGraph:
    """Episodes, entities and facts of every tenant, with the temporal rules of DESIGN.md.

    Every method takes `tenant_id` first and raises `TenantRequired` when it is missing or empty, before any
    query runs. Errors: `InvalidInput`, `NotFound` (unknown or other tenant's id), `Conflict`.
    """

    def __init__(self, db: Database, settings: Settings, indexer: Indexer | None = None):
        self.db = db
        self.settings = settings
        self.indexer = indexer if settings.embed_on_write else None
        self._base_ontology = Ontology.default()
        self._tokens = TokenCounter.for_model(settings.llm_model)

    # ---- ontology ---------------------------------------------------------------------------
    def ontology(self, tenant_id: str) -> Ontology:
        """The shipped ontology extended with the tenant's own predicates and its fact-class TTL overrides."""
        require_tenant(tenant_id)
        return self._ontology_of(self.db.one("ontology/for_tenant", tenant_id=tenant_id))

    @property
    def shipped_ontology(self) -> Ontology:
        """The ontology every tenant starts from (`Ontology.default`)."""
        return self._base_ontology

    def known_predicates(self, tenant_id: str, predicates: list[str] | None, field: str,
                         indexed: bool = True, walkable: bool = False) -> list[str] | None:
        """`predicates` upper-cased (None when none are given), after checking that the tenant's ontology has each:
        a read filtered by a predicate that cannot match (a typo such as WORK_AT) is an `InvalidInput` naming
        `field[i]` (`field` when not `indexed`: a single-valued parameter), not an empty answer. So is more than
        `MAX_PREDICATES` of them, and, with `walkable` (a path's filter), one whose object is only ever a literal
        value (HAS_TITLE joins no two entities, so no path walks it)."""
        if not predicates:
            return None
        if len(predicates) > MAX_PREDICATES:
            raise InvalidInput(f"{field}: at most {MAX_PREDICATES} predicates", field=field)
        names = [p.upper() for p in predicates]
        ontology = self.ontology(tenant_id)
        for i, name in enumerate(names):
            where = f"{field}[{i}]" if indexed else field
            p = ontology.get(name, where)
            if walkable and all(k == LITERAL for k in p.object_kinds):
                raise InvalidInput(f"{where}: {p.name} takes a literal value, so it joins no two entities and no "
                                   "path walks it", field=where)
        return names

    def _ontology_of(self, row: dict) -> Ontology:
        # stored predicates were checked when they were written: read as stored, not against rules added since
        # (a template or flag refused today must not lock the tenant out of its own graph: found by a helper)
        extra = [Predicate.model_construct(**p) for p in row["predicates"]]
        onto = self._base_ontology.extended(extra) if extra else self._base_ontology
        if row["fact_class_ttl_json"]:
            onto = onto.with_class_ttls(json.loads(row["fact_class_ttl_json"]))
        return onto

    def add_predicate(self, tenant_id: str, predicate: Predicate) -> Predicate:
        """Extend the tenant's ontology with `predicate` (replacing the tenant's or the shipped predicate of the same
        name for this tenant). Raises `Conflict` naming the first field that would change what the tenant's stored
        facts of the predicate mean (`_meaning`: cardinality, symmetric, fact_class, sensitivity, or a literal
        object becoming an entity's or back) while any are stored: a multi-valued predicate made single-valued
        would keep two current values, a literal one made an entity's would strand its values."""
        require_tenant(tenant_id)
        old = self.ontology(tenant_id).predicates.get(predicate.name)

        def work(tx: Tx) -> None:
            changed = [k for k, v in _meaning(predicate).items() if old is not None and _meaning(old)[k] != v]
            if changed and tx.one("ontology/predicate_used", tenant_id=tenant_id, predicate=predicate.name)["used"]:
                raise Conflict(f"{predicate.name} has stored facts, which its {changed[0]} decides how to read; "
                               "define a new predicate instead", field=changed[0])
            tx.run("ontology/upsert_predicate", tenant_id=tenant_id, predicate=predicate.model_dump())
        self.db.write(work)
        return predicate

    # ---- episodes ---------------------------------------------------------------------------
    def append_episode(self, tenant_id: str, episode: EpisodeIn, *, extraction_status: str = "pending",
                       agent_id: str | None = None, extraction_reason: str | None = None, searchable: bool = True,
                       on_created: Callable[[Tx, Episode], None] | None = None,
                       ingested_at: datetime | None = None,
                       expire: Callable[[Tx, list[str]], object] | None = None) -> tuple[Episode, bool]:
        """Store an episode (idempotent by `idempotency_key`) in one transaction. Returns (episode, created).

        `extraction_reason` says why a job ended at intake (stored with `finished_at`); `searchable` false keeps the
        episode out of search (`graphmem.store.episodes.append`); `on_created(tx, episode)`
        runs in the same transaction when the episode was created (e.g. to record write-policy refusals), so
        everything an accepted episode needs is committed together. `ingested_at` (UTC; default now): the arrival
        time, one for the episodes of one call. `expire(tx, [episode id])`: expires, in this transaction, an episode
        stored under the key past its retention, which is then stored anew (`graphmem.store.episodes.append`)."""
        require_tenant(tenant_id)
        tokens = self._tokens.count(episode.content)

        def work(tx: Tx) -> tuple[Episode, bool]:
            stored, created = episode_store.append(
                tx, tenant_id, episode, self.settings, token_count=tokens, extraction_status=extraction_status,
                agent_id=agent_id, extraction_reason=extraction_reason, searchable=searchable, now=ingested_at,
                expire=expire)
            if created and on_created is not None:
                on_created(tx, stored)
            return stored, created
        stored, created = self.db.write(work)
        if created and self.indexer:
            self.indexer.index_episodes(tenant_id, [stored.id])
        return stored, created

    def discard_episode(self, tenant_id: str, episode_id: str) -> bool:
        """Delete `episode_id` if no fact cites it (the record of a write that then failed), with the refusals recorded
        with it; True if deleted."""
        require_tenant(tenant_id)
        return self.db.execute("episodes/discard_unused", tenant_id=tenant_id, id=episode_id)[0]["deleted"] > 0

    def discard_turn_episodes(self, tenant_id: str, session_id: str, episode_ids: list[str]) -> int:
        """Delete the episodes `episode_ids` that a refused try of a turn stored in `session_id` (those no fact
        cites yet), with their refusals, relinking the session's episode chain around them; returns how many went."""
        require_tenant(tenant_id)
        if not episode_ids:
            return 0
        rows = self.db.execute("episodes/discard_turn", tenant_id=tenant_id, session_id=session_id, ids=episode_ids)
        return rows[0]["deleted"] if rows else 0

    def keep_call_result(self, tenant_id: str, episode_id: str, result: str) -> None:
        """Keep `result` (the JSON answer of the API write that event episode `episode_id` recorded) for replays
        under the same Idempotency-Key; an answer kept before stays."""
        require_tenant(tenant_id)
        self.db.execute("episodes/call_result_put", tenant_id=tenant_id, id=episode_id, result=result)

    def call_state(self, tenant_id: str, episode_id: str) -> dict | None:
        """{"result": the JSON answer kept for the API write that event episode `episode_id` recorded (None while
        it runs; '' when it failed after something cited the episode), "recorded_at": when the call was recorded
        (UTC)}, or None when there is no such event episode (the write failed and deleted its record). A record
        deleted while it was read comes back with both fields None (Neo4j reads are read-committed)."""
        require_tenant(tenant_id)
        return self.db.one("episodes/call_result_get", tenant_id=tenant_id, id=episode_id)

    def episode_by_key(self, tenant_id: str, idempotency_key: str) -> Episode | None:
        """The episode stored under `idempotency_key` in this tenant, or None."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: episode_store.by_key(tx, tenant_id, idempotency_key))

    def get_episode(self, tenant_id: str, episode_id: str) -> Episode:
        require_tenant(tenant_id)
        return self.db.read(lambda tx: episode_store.get(tx, tenant_id, episode_id))

    def session_episodes(self, tenant_id: str, session_id: str, offset: int = 0, limit: int = 100) -> list[Episode]:
        """A session's episodes in `NEXT`-chain order."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: episode_store.list_session(tx, tenant_id, session_id, offset, limit))

    # ---- entities ---------------------------------------------------------------------------
    def upsert_entity(self, tenant_id: str, ref: EntityRef) -> Entity:
        """Resolve `ref` to an existing entity (enriching it) or create it."""
        require_tenant(tenant_id)
        def work(tx):
            brief = entity_store.resolve(tx, tenant_id, [ref], self.settings, ["entity"])[0]
            return entity_store.get(tx, tenant_id, brief.id)
        return self.db.write(work)

    def get_entity(self, tenant_id: str, entity_id: str, field: str = "entity_id") -> Entity:
        """The tenant's entity `entity_id`; `NotFound` naming `field` ("entity_id: no entity 'x'")."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: entity_store.get(tx, tenant_id, entity_id, field))

    def find_entities(self, tenant_id: str, name: str, kind: str | None = None, limit: int = 10) -> list[Entity]:
        """Entities by normalised name or alias (optionally of one kind)."""
        require_tenant(tenant_id)
        if not name or blank(name):
            raise InvalidInput(f"name {BLANK_WORDS}", field="name")
        return self.db.read(lambda tx: entity_store.find_by_name(tx, tenant_id, name, kind, limit))

    # ---- facts ------------------------------------------------------------------------------
    def assert_facts(self, tenant_id: str, facts: list[FactIn]) -> list[AssertOutcome]:
        """Assert facts in one transaction (the bulk path; one fact is a batch of one).

        Batches larger than `settings.bulk_batch_size` are split into several transactions, each all-or-nothing.
        """
        require_tenant(tenant_id)
        out: list[AssertOutcome] = []
        size = self.settings.bulk_batch_size

        def work(tx, start, chunk):   # the ontology is read in the batch's own transaction: no extra round trips
            ontology = self._ontology_of(tx.one("ontology/for_tenant", tenant_id=tenant_id))
            return fact_store.assert_batch(tx, tenant_id, chunk, ontology, self.settings,
                                           fields=[f"facts[{start + i}]" for i in range(len(chunk))])
        for start in range(0, len(facts), size):
            chunk = facts[start:start + size]
            out += self.db.write(lambda tx: work(tx, start, chunk))
        if self.indexer:
            self.indexer.index_facts(tenant_id, [o.fact_id for o in out if o.fact_id and o.action != "duplicate"])
        return out

    def assert_fact(self, tenant_id: str, fact: FactIn) -> AssertOutcome:
        return self.assert_facts(tenant_id, [fact])[0]

    def retract(self, tenant_id: str, subject_id: str, predicate: str, episode_id: str, *, at: datetime | None = None,
                object_id: str | None = None, value: str | None = None) -> list[str]:
        """Retract (close, not delete) the subject's `predicate` facts valid at `at` (default: the episode's time);
        optionally only the one with this object or value. For a symmetric predicate (KNOWS) the pair's facts stored
        the other way round are closed too. Returns the closed fact ids. Raises `InvalidInput` for a predicate the
        tenant's ontology does not have (field `predicate`), an `object_id` of a predicate that takes literal values
        or a `value` of one that takes entities (naming that field); `NotFound` for an `object_id` that is not this
        tenant's entity (field `object_id`) or when no such fact is valid at `at` (field `predicate`)."""
        require_tenant(tenant_id)
        ontology = self.ontology(tenant_id)
        p = ontology.get(predicate.upper())
        if object_id is not None and all(k == LITERAL for k in p.object_kinds):
            raise InvalidInput(f"object_id: {p.name} takes a literal value, not an entity; give value",
                               field="object_id")
        if value is not None and not p.accepts_object(None):
            raise InvalidInput(f"value: {p.name} points at an entity ({', '.join(p.object_kinds)}), never a literal "
                               "value; give object_id", field="value")
        okey = f"e:{object_id}" if object_id else (f"v:{value_key(value)}" if value else None)

        def work(tx):
            if object_id is not None:
                entity_store.get(tx, tenant_id, object_id, "object_id")
            ep = episode_store.get(tx, tenant_id, episode_id)
            when = to_utc(at, "at") if at else ep.occurred_at
            return fact_store.retract(tx, tenant_id, subject_id, p.name, when, episode_id, okey, symmetric=p.symmetric,
                                      ontology=ontology, settings=self.settings)
        return self.db.write(work)

    def correct(self, tenant_id: str, fact_id: str, episode_id: str, *, value: str | None = None,
                object: EntityRef | None = None) -> AssertOutcome:
        """A user correction: the old fact was wrong. It is expired in transaction time (kept for history and for
        `known_at` queries) and a new `user_explicit` fact with the same validity supersedes it (a retracted fact's
        correction is retracted where it was, so the retraction's rule for late values still holds)."""
        require_tenant(tenant_id)
        ontology = self.ontology(tenant_id)

        def work(tx):
            # lock the subject's timeline, then read the fact: corrections of one fact sent at once run one after
            # the other, and every one after the first finds it corrected
            tx.rows("facts/lock_subjects", tenant_id=tenant_id, ids=[fact_store.get(tx, tenant_id, fact_id).subject_id])
            old = fact_store.get(tx, tenant_id, fact_id)
            if old.status == "corrected":
                raise InvalidInput(f"fact {fact_id} was already corrected", field="fact_id")
            now = utcnow()
            tx.run("facts/expire", tenant_id=tenant_id, id=fact_id, now=now)
            new = FactIn(subject=EntityRef(id=old.subject_id), predicate=old.predicate, object=object, value=value,
                         valid_from=old.valid_from, valid_to=old.valid_to, source="user_explicit", confidence=1.0,
                         episode_id=episode_id)
            # errors name the caller's own fields (value, object), not a batch's
            outcome = fact_store.assert_batch(tx, tenant_id, [new], ontology, self.settings, field_prefix="",
                                              stated_ends=False, now=now)[0]
            if outcome.action in WRITTEN and old.status == "retracted":   # ended where the wrong one was retracted
                tx.run("facts/close_batch", tenant_id=tenant_id, now=now, rows=[
                    {"id": outcome.fact_id, "valid_to": old.valid_to, "status": "retracted",
                     "value_retraction": bool(old.value_retraction)}])
            if outcome.fact_id:
                tx.run("facts/link_supersedes", tenant_id=tenant_id, now=now,
                       rows=[{"newer": outcome.fact_id, "older": fact_id}])
            tx.run("facts/add_provenance", tenant_id=tenant_id, now=now, rows=[
                {"fact_id": fact_id, "episode_id": episode_id, "confidence": 1.0, "source": "user_explicit",
                 "role": "correction"}])
            return AssertOutcome(action="corrected", fact_id=outcome.fact_id, closed_fact_id=fact_id)
        result = self.db.write(work)
        if self.indexer and result.fact_id:
            self.indexer.index_facts(tenant_id, [result.fact_id])
        return result

    def corrected_by(self, tenant_id: str, fact_id: str, episode_id: str) -> AssertOutcome | None:
        """The outcome of the correction of `fact_id` that `episode_id` recorded (to replay a retried call), or
        None when that episode corrected nothing."""
        require_tenant(tenant_id)
        row = self.db.one("facts/corrected_by", tenant_id=tenant_id, fact_id=fact_id, episode_id=episode_id)
        return AssertOutcome(action="corrected", fact_id=row["fact_id"], closed_fact_id=fact_id) if row else None

    def retracted_by(self, tenant_id: str, episode_id: str) -> list[str]:
        """The ids of the facts `episode_id` retracted (to replay a retried call), sorted."""
        require_tenant(tenant_id)
        return [r["fact_id"] for r in self.db.rows("facts/retracted_by", tenant_id=tenant_id, episode_id=episode_id)]

    def get_fact(self, tenant_id: str, fact_id: str) -> Fact:
        require_tenant(tenant_id)
        return self.db.read(lambda tx: fact_store.get(tx, tenant_id, fact_id))

    def facts_about(self, tenant_id: str, entity_id: str, *, as_of: datetime | None = None,
                    known_at: datetime | None = None, include_superseded: bool = False,
                    predicates: list[str] | None = None, offset: int = 0, limit: int = 1000) -> list[Fact]:
        """Facts about an entity valid at `as_of` (valid time) as known at `known_at` (transaction time), or with
        `include_superseded` every version known then (`as_of` with it is an `InvalidInput` naming as_of:
        `check_every_version`), only `predicates` when given (`InvalidInput`, field predicate, for one the tenant
        does not have): the `limit` after the first `offset`, ordered by predicate, then oldest valid_from first,
        recorded_at and fact id (stable across pages; as the neighbourhood and a fact's history).
        `NotFound` (field entity_id) for an entity the tenant does not have."""
        require_tenant(tenant_id)
        check_every_version(as_of, include_superseded)
        as_of = to_utc(as_of, "as_of") if as_of else None
        known_at = to_utc(known_at, "known_at") if known_at else None

        predicates = self.known_predicates(tenant_id, predicates, "predicate")

        def work(tx):
            entity_store.get(tx, tenant_id, entity_id)
            return fact_store.about(tx, tenant_id, entity_id, as_of=as_of, known_at=known_at,
                                    include_superseded=include_superseded, predicates=predicates,
                                    offset=offset, limit=limit)
        return self.db.read(work)

    def fact_history(self, tenant_id: str, fact_id: str, *, offset: int = 0, limit: int = 1000) -> list[Fact]:
        """The supersession timeline of `fact_id`, oldest valid_from first (then recorded_at and id): the `limit`
        versions after the first `offset`, paged in Neo4j. `NotFound` (field fact_id) for a fact the tenant does not
        have."""
        require_tenant(tenant_id)
        ontology = self.ontology(tenant_id)
        return self.db.read(lambda tx: fact_store.history(tx, tenant_id, fact_id, ontology,
                                                          offset=offset, limit=limit))

    def fact_provenance(self, tenant_id: str, fact_id: str, *, offset: int = 0,
                        limit: int = 1000) -> list[Provenance]:
        """The episodes that said, confirmed, retracted or corrected `fact_id`, oldest recorded first: the `limit`
        after the first `offset`, paged in Neo4j. `NotFound` (field fact_id) for a fact the tenant does not have."""
        require_tenant(tenant_id)
        return self.db.read(lambda tx: fact_store.provenance(tx, tenant_id, fact_id, offset=offset, limit=limit))


def check_every_version(as_of: datetime | None, include_superseded: bool) -> None:
    """`InvalidInput` naming `as_of` when it is given with `include_superseded`: a list of every version (ended,
    superseded, retracted, not yet started) has no valid time to filter by, so `as_of` would be dropped without a
    word. `known_at` still rewinds such a list (what was known then)."""
    if include_superseded and as_of is not None:
        raise InvalidInput("as_of: include_superseded lists every version whatever its valid time, so as_of would "
                           "change nothing; leave out as_of to list every version (known_at rewinds what was known), "
                           "or include_superseded to list the facts valid at as_of", field="as_of")


def build(services) -> TemporalGraph:
    """`Services` factory."""
    return TemporalGraph(services.db, services.settings, Indexer(services.db, services.embedder))
