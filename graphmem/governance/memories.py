"""What a user can see and do with their memory: list, export, correct, delete, and confirm or reject held
candidates.

Which facts are a user's: every fact with provenance in one of the user's episodes (episodes whose `user_id` is
the user, or that belong to one of the user's sessions), plus every fact about the user's own entity (the entity
carrying the external id "user:<user_id>"). A user sees only the provenance from their own episodes; sources
from other users are counted (`other_sources`), never shown.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime

from graphmem.context.models import Summary
from graphmem.context.pins import from_row as pin_from_row
from graphmem.context.sessions import session_info
from graphmem.errors import InvalidInput, NotFound
from graphmem.governance.erasure import Eraser, steps, user_scope
from graphmem.governance.models import Memory, MemoryPage, ProvenanceNote, Receipt
from graphmem.graph import TemporalGraph
from graphmem.identifiers import blank
from graphmem.ingest.jobs import EXPLICIT_FACTS
from graphmem.ingest.refusals import Refusal
from graphmem.models import AssertOutcome, EntityRef, Episode, EpisodeIn, Fact, FactIn
from graphmem.store import Database, require_tenant, whole
from graphmem.store import facts as fact_store
from graphmem.timeutil import utcnow


EXPORT_PAGE_CHARS = 5_000_000
"""Most episode content (characters) one read of a user's export holds (`Memories.export_stream`): a user of 2,800
episodes of 99k characters, read in one statement, overran Neo4j's transaction memory (a 503)."""


def _json(doc) -> bytes:
    """`doc` as compact UTF-8 JSON, as FastAPI's JSONResponse renders a body."""
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


def _note(p: dict) -> ProvenanceNote:
    when = p["occurred_at"].to_native()
    conf = p["confidence"]
    text = (f"learned on {when.date().isoformat()} from episode {p['episode_id']}, source {p['source']}, "
            f"confidence {conf:g}" if conf is not None else f"learned on {when.date().isoformat()} from episode "
            f"{p['episode_id']}, source {p['source']}")
    if p.get("role") and p["role"] != "assertion":
        text += f" ({p['role']})"
    return ProvenanceNote(**p, text=text)


def _plain(v):
    """Driver values to JSON-ready ones: temporal values as ISO 8601 strings (UTC), recursively."""
    if hasattr(v, "to_native"):
        v = v.to_native()
    if isinstance(v, datetime):
        return v.isoformat()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_plain(x) for x in v]
    return v


class Memories:
    """User-visible memory over the temporal graph."""

    def __init__(self, db: Database, graph: TemporalGraph, eraser: Eraser):
        self.db, self.graph, self.eraser = db, graph, eraser

    # ---- whose is what ------------------------------------------------------------------------
    def _scope(self, tenant_id: str, user_id: str) -> tuple[list[str], list[str], list[str]]:
        """(session ids, episode ids, own entity ids) of the user."""
        require_tenant(tenant_id)
        if not isinstance(user_id, str) or blank(user_id):
            raise InvalidInput("user_id is required", field="user_id")
        return user_scope(self.db, tenant_id, user_id)

    def _page(self, tenant_id: str, user_id: str, *, candidates: bool, offset: int, limit: int,
              now: datetime | None = None, fact_id: str | None = None) -> MemoryPage:
        _, episodes, entities = self._scope(tenant_id, user_id)
        return self._facts(tenant_id, episodes, entities, candidates=candidates, offset=offset, limit=limit,
                           now=now, fact_id=fact_id)

    def warm_up(self, tenant_id: str) -> None:
        """Read a page of memories (`list`) of `tenant_id` as for a user with episodes and entities, with episodes
        only and with neither, for ids that do not exist: Neo4j plans an empty list parameter apart from a list of
        strings, so reading an unknown user's page (empty lists) left a real user's first `GET /v1/memories` after
        a start to plan it (150-230 ms). For `graphmem.ops.warm_up`."""
        self._scope(tenant_id, "warm-up")
        for episodes, entities in ((["warm-up"], ["warm-up"]), (["warm-up"], []), ([], [])):
            self._facts(tenant_id, episodes, entities, candidates=False, offset=0, limit=50)

    def _facts(self, tenant_id: str, episodes: list[str], entities: list[str], *, candidates: bool, offset: int,
               limit: int, now: datetime | None = None, fact_id: str | None = None) -> MemoryPage:
        """A page of the facts from `episodes` or about `entities` (ids of one user's scope, `_scope`)."""
        rows = self.db.rows("governance/user_facts", tenant_id=tenant_id, episode_ids=episodes, entity_ids=entities,
                            candidates=candidates, now=now or utcnow(), offset=offset, limit=limit, fact_id=fact_id)
        items = [Memory(fact=Fact(**r["fact"]), subject_name=r["subject_name"], object_name=r["object_name"],
                        provenance=[_note(p) for p in r["provenance"]], other_sources=r["other_sources"],
                        expired_sources=r["fact"].get("expired_source_count") or 0)
                 for r in rows if whole(r["fact"], Fact)]
        # a fact a forget deleted while this read projected it is left out (`whole`), and out of the total too (a
        # page past the end, or of no facts, is one row without a fact)
        total = rows[0]["total"] - (sum(r["fact"] is not None for r in rows) - len(items)) if rows else 0
        return MemoryPage(items=items, total=total, offset=offset, limit=limit)

    def list(self, tenant_id: str, user_id: str, offset: int = 0, limit: int = 50,
             now: datetime | None = None) -> MemoryPage:
        """The user's facts (every status but candidates; not past retention), newest first, with provenance."""
        return self._page(tenant_id, user_id, candidates=False, offset=offset, limit=limit, now=now)

    def candidates(self, tenant_id: str, user_id: str, offset: int = 0, limit: int = 50) -> MemoryPage:
        """The user's held candidate facts (sensitive inferences waiting for confirmation)."""
        return self._page(tenant_id, user_id, candidates=True, offset=offset, limit=limit)

    def refusals(self, tenant_id: str, user_id: str) -> list[dict]:
        """The write-policy refusals recorded for the user's episodes (as the ingest path stores them)."""
        _, episodes, _ = self._scope(tenant_id, user_id)
        return _plain(self.db.one("governance/user_refusals", tenant_id=tenant_id, episode_ids=episodes,
                                  now=utcnow())["refusals"])

    def export(self, tenant_id: str, user_id: str, now: datetime | None = None) -> dict:
        """Everything stored about the user as one JSON-ready dict: sessions, episodes (with content), facts and
        candidates with provenance, pins, summaries and write-policy refusals; nothing past retention at `now`
        (UTC, default now: expired episodes and the summaries built on them, as every read leaves them out). Each
        record has the shape its own read answers with, from the same model (`Episode`, `SessionInfo`, `Pin`,
        `Summary`, `Refusal`): no stored-only property (search terms, tenant token, locks) is exported. Held in
        memory whole: `export_stream` gives the same document in pieces. Raises `InvalidInput` (field user_id) for
        a blank user id, `TenantRequired`."""
        head, pages = self._export_parts(tenant_id, user_id, now)
        return {**head, "episodes": [e for page in pages for e in page]}

    def export_stream(self, tenant_id: str, user_id: str, now: datetime | None = None) -> Iterator[bytes]:
        """`export`'s document as UTF-8 JSON text in pieces, for a response that streams it: everything but the
        episodes is read before this returns (so a failure there raises here, before anything is sent), then the
        episodes a page at a time, each read holding at most `EXPORT_PAGE_CHARS` characters of content, as the
        iterator is consumed. Same errors as `export`."""
        head, pages = self._export_parts(tenant_id, user_id, now)

        def pieces() -> Iterator[bytes]:
            yield _json(head)[:-1] + b',"episodes":['
            sep = b""
            for page in pages:
                for episode in page:
                    yield sep + _json(episode)
                    sep = b","
            yield b"]}"
        return pieces()

    def _export_parts(self, tenant_id: str, user_id: str, now: datetime | None) -> tuple[dict, Iterator[list[dict]]]:
        """The export without its episodes (read now), and the episodes as pages (read as they are iterated:
        governance/user_episode_index orders and sizes them now, governance/user_episodes reads each page)."""
        now = now or utcnow()
        sessions, episodes, _ = self._scope(tenant_id, user_id)
        records = {**self.db.one("governance/user_records", tenant_id=tenant_id, session_ids=sessions, now=now),
                   **self.db.one("governance/user_refusals", tenant_id=tenant_id, episode_ids=episodes, now=now)}
        big = 10_000_000
        facts = self._page(tenant_id, user_id, candidates=False, offset=0, limit=big, now=now).items
        cands = self._page(tenant_id, user_id, candidates=True, offset=0, limit=big, now=now).items
        public = [("sessions", session_info), ("pins", pin_from_row), ("summaries", Summary.model_validate),
                  ("refusals", Refusal.model_validate)]
        head = {"user_id": user_id, "tenant_id": tenant_id, "exported_at": now.isoformat(),
                "facts": [m.model_dump(mode="json") for m in facts],
                "candidates": [m.model_dump(mode="json") for m in cands],
                **{name: [shape(row).model_dump(mode="json") for row in records[name]] for name, shape in public}}
        index = self.db.rows("governance/user_episode_index", tenant_id=tenant_id, episode_ids=episodes, now=now)

        def pages() -> Iterator[list[dict]]:
            for step in steps(index, EXPORT_PAGE_CHARS):
                rows = self.db.rows("governance/user_episodes", tenant_id=tenant_id, ids=[r["id"] for r in step],
                                    now=now)
                yield [Episode.model_validate(r["episode"]).model_dump(mode="json") for r in rows
                       if whole(r["episode"], Episode)]
        return head, pages()

    # ---- changes ------------------------------------------------------------------------------
    def _owned(self, tenant_id: str, user_id: str, fact_id: str) -> str:
        """The fact's status if it is the user's; `NotFound` (field fact_id) otherwise."""
        _, episodes, entities = self._scope(tenant_id, user_id)
        row = self.db.one("governance/fact_owner", tenant_id=tenant_id, fact_id=fact_id, episode_ids=episodes,
                          entity_ids=entities)
        if row is None or not row["owned"]:
            raise NotFound(f"user {user_id!r} has no fact {fact_id!r}", field="fact_id")
        return row["status"]

    def _user_episode(self, tenant_id: str, user_id: str, text: str, key: str | None = None) -> str:
        """Record the user's action as an episode (kind event, not extracted): the provenance of the change. Search
        never returns it: it names the action and the fact id, not anything said (as the record of an API write)."""
        ep, _ = self.graph.append_episode(tenant_id, EpisodeIn(
            kind="event", content=text, occurred_at=utcnow(), user_id=user_id, role="user",
            source="user_explicit", idempotency_key=key), extraction_status="skipped", extraction_reason=EXPLICIT_FACTS,
            searchable=False)
        return ep.id

    def _undo_episode(self, tenant_id: str, episode_id: str) -> None:
        self.db.execute("governance/delete_episodes", tenant_id=tenant_id, ids=[episode_id])

    def correct(self, tenant_id: str, user_id: str, fact_id: str, *, value: str | None = None,
                object: EntityRef | None = None) -> AssertOutcome:
        """The user's correction: a supersession with source user_explicit (`TemporalGraph.correct`), with an
        episode recording the correction as its provenance. Exactly one of `value` / `object`.
        Raises `NotFound` (not the user's fact), `InvalidInput` (a candidate, both or neither given, a value the
        predicate does not take); nothing is left behind on error."""
        if (value is None) == (object is None):
            raise InvalidInput("give exactly one of value or object", field="value")
        status = self._owned(tenant_id, user_id, fact_id)
        if status == "candidate":
            raise InvalidInput("a candidate is confirmed or rejected, not corrected", field="fact_id")
        shown = value if value is not None else (object.name or object.id)
        ep = self._user_episode(tenant_id, user_id, f"User corrected memory {fact_id}: {shown}")
        try:
            return self.graph.correct(tenant_id, fact_id, ep, value=value, object=object)
        except Exception:
            self._undo_episode(tenant_id, ep)
            raise

    def delete(self, tenant_id: str, user_id: str, fact_id: str, *, actor: str | None = None) -> Receipt:
        """Delete one of the user's facts as forgetting the user would take it, touching nothing else
        (`Eraser.forget` with `for_user`): a fact about the user's own entity, or one only the user's episodes
        support, is erased (the cascade for a fact); one another user's (or any other) episode still supports stays,
        readable with that provenance only, and loses the user's (receipt `facts_kept` 1). The user's episodes stay.
        Raises `NotFound` (field fact_id: not the user's fact), `Refused` (a legal hold on what would change)."""
        self._owned(tenant_id, user_id, fact_id)
        return self.eraser.forget(tenant_id, fact_id=fact_id, actor=actor, for_user=user_id)

    def confirm(self, tenant_id: str, user_id: str, fact_id: str) -> AssertOutcome:
        """Confirm a held candidate: it is asserted again as a `user_confirmed` fact (confidence 1.0) through the
        normal temporal rules, with the confirmation episode and the candidate's original episodes as provenance;
        the candidate node is removed. One transaction. `InvalidInput` if the fact is not a candidate."""
        if self._owned(tenant_id, user_id, fact_id) != "candidate":
            raise InvalidInput(f"fact {fact_id} is not a candidate", field="fact_id")
        ep = self._user_episode(tenant_id, user_id, f"User confirmed memory {fact_id}", key=f"confirm:{fact_id}")
        ontology = self.graph.ontology(tenant_id)

        def work(tx):
            cand = fact_store.get(tx, tenant_id, fact_id)
            if cand.status != "candidate":
                raise InvalidInput(f"fact {fact_id} is not a candidate", field="fact_id")
            sources = tx.rows("governance/candidate_sources", tenant_id=tenant_id, fact_id=fact_id)
            new = FactIn(subject=EntityRef(id=cand.subject_id), predicate=cand.predicate,
                         object=EntityRef(id=cand.object_id) if cand.object_id else None, value=cand.value,
                         valid_from=cand.valid_from, valid_to=cand.valid_to, confidence=1.0, source="user_confirmed",
                         statement=cand.statement, episode_id=ep)
            out = fact_store.assert_batch(tx, tenant_id, [new], ontology, self.graph.settings, "fact")[0]
            if out.fact_id and out.action != "rejected":
                tx.run("facts/add_provenance", tenant_id=tenant_id, now=utcnow(), rows=[
                    {"fact_id": out.fact_id, "episode_id": s["episode_id"], "confidence": s["confidence"],
                     "source": s["source"], "role": "assertion", "retain_until": None}
                    for s in sources if s["episode_id"] != ep])
                tx.run("governance/delete_facts", tenant_id=tenant_id, ids=[fact_id])
            return out
        try:
            out = self.db.write(work)
        except Exception:
            self._undo_episode(tenant_id, ep)
            raise
        if self.graph.indexer and out.fact_id:
            self.graph.indexer.index_facts(tenant_id, [out.fact_id])
        return out

    def reject(self, tenant_id: str, user_id: str, fact_id: str, *, actor: str | None = None) -> Receipt:
        """Reject a held candidate as `delete` deletes a fact (audit action "reject"): erased, unless another
        episode than the user's still supports it, which then only loses the user's provenance."""
        if self._owned(tenant_id, user_id, fact_id) != "candidate":
            raise InvalidInput(f"fact {fact_id} is not a candidate", field="fact_id")
        return self.eraser.forget(tenant_id, fact_id=fact_id, actor=actor, action="reject", for_user=user_id)
