"""A small Python client for the graphmem HTTP API, sync (`Client`) and async (`AsyncClient`), on httpx.

Requests and replies use the same pydantic models as the server (`graphmem.models`, `graphmem.recall.models`
and the routers' request/response models in `api.routes.*`), so a reply is validated as it arrives. Every error reply raises
`ApiError`, which carries the RFC 9457 problem+json body (`status`, `title`, `detail`, `field`, `request_id`).

    from graphmem.client import Client
    with Client("http://127.0.0.1:8080", api_key="gm_...") as gm:
        out = gm.assert_facts([FactIn(subject=..., predicate="WORKS_AT", object=...)])
        gm.fact_history(out.outcomes[0].fact_id)

    async with AsyncClient(url, api_key=key) as gm:
        fact = await gm.get_fact(fact_id)

Each route method is written once (`_Routes`) and returns a `_Call` description; `Client` runs it with
`httpx.Client`, `AsyncClient` with `httpx.AsyncClient` (so `AsyncClient` methods are awaitables of the types shown).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar
from urllib.parse import quote

import httpx
from pydantic import BaseModel, TypeAdapter

from api.routes.admin import KeyCreated, KeyList, TenantList
from api.routes.entities import EntityPage, NeighbourPage, PathList
from api.routes.episodes import Appended, BatchAppended, EpisodePage
from api.routes.facts import FactPage, FactsAsserted, ProvenancePage, Retracted
from api.routes.governance import AuditList, HoldList
from api.routes.jobs import JobPage
from api.routes.memories import CandidateList
from api.routes.ontology import PredicatePage
from api.routes.pins import PinKeyList, PinList
from api.routes.policy import RefusalPage
from api.routes.search import IntroductionResponse, MembersResponse, RecallRequest, RecallResponse
from api.routes.sessions import RollbackResult, SessionList, SummaryList
from graphmem.context.models import CompactionResult, ContextRequest, TurnIn, TurnResult, Window
from graphmem.context.pins import Pin, PinKeyDef
from graphmem.context.sessions import Consent, ConsentIn, SessionInfo
from graphmem.governance.models import Hold, MemoryPage, Receipt, RetentionSettings, RetentionView, SweepReceipt
from graphmem.ingest.jobs import Job
from graphmem.keys import ApiKey
from graphmem.models import PRINTABLE_ASCII, AssertOutcome, Entity, EntityRef, Episode, EpisodeIn, Fact, FactIn
from graphmem.ontology import Predicate
from graphmem.recall.models import SearchRequest, SearchResponse

T = TypeVar("T")


class ApiError(Exception):
    """An error reply. `problem` is the problem+json body (or a synthesized one for a non-JSON reply)."""

    def __init__(self, status: int, problem: dict[str, Any]):
        self.status = status
        self.problem = problem
        self.title: str = problem.get("title", "")
        self.detail: str = problem.get("detail", "")
        self.field: str | None = problem.get("field")
        self.request_id: str | None = problem.get("request_id")
        super().__init__(f"{status} {self.title}: {self.detail}")


@dataclass
class _Call(Generic[T]):
    method: str
    path: str
    model: Any = None
    params: dict[str, Any] | None = None
    json: Any = None
    headers: dict[str, str] = field(default_factory=dict)


def _p(value: str) -> str:
    return quote(str(value), safe="")


def _body(obj: Any, record: bool = True) -> Any:
    """JSON-ready form of a request body: models without their None fields, datetimes as ISO 8601. A dict given as
    the body (or as an item of a body list) loses its None fields like a model; a None inside it is sent as null
    (`{"fact_class_ttl_days": {"activity": None}}` removes that class's TTL)."""
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", exclude_none=True)
    if isinstance(obj, list):
        return [_body(o, record) for o in obj]
    if isinstance(obj, dict):
        return {k: _body(v, False) for k, v in obj.items() if not (record and v is None)}
    if isinstance(obj, datetime):
        return obj.isoformat()
    return obj


def _params(**kw: Any) -> dict[str, Any]:
    out = {}
    for k, v in kw.items():
        if v is None:
            continue
        out[k] = v.isoformat() if isinstance(v, datetime) else ("true" if v is True else "false" if v is False else v)
    return out


def _parse(call: _Call, response: httpx.Response) -> Any:
    if response.status_code >= 400:
        try:
            problem = response.json()
            if not isinstance(problem, dict):
                raise ValueError
        except ValueError:
            problem = {"title": response.reason_phrase, "status": response.status_code, "detail": response.text[:500]}
        raise ApiError(response.status_code, problem)
    if call.model is None:
        return None if not response.content else response.json()
    if call.model is str:
        return response.text
    return TypeAdapter(call.model).validate_python(response.json())


class _Routes:
    """Every /v1 route, once. Methods return `_Call`s; the concrete clients execute them."""

    def _call(self, call: _Call) -> Any:  # pragma: no cover - replaced by the concrete clients
        raise NotImplementedError

    # ---- facts ------------------------------------------------------------------------------------------------
    def assert_facts(self, facts: list[FactIn | dict], *, idempotency_key: str | None = None) -> FactsAsserted:
        """POST /v1/facts: assert explicit facts (1..1000) under the write policy and the temporal rules."""
        headers = _idempotency(idempotency_key)
        return self._call(_Call("POST", "/v1/facts", FactsAsserted, json={"facts": _body(facts)}, headers=headers))

    def get_fact(self, fact_id: str) -> Fact:
        """GET /v1/facts/{id}."""
        return self._call(_Call("GET", f"/v1/facts/{_p(fact_id)}", Fact))

    def fact_history(self, fact_id: str, *, offset: int = 0, limit: int = 50) -> FactPage:
        """GET /v1/facts/{id}/history: the supersession timeline, oldest first."""
        return self._call(_Call("GET", f"/v1/facts/{_p(fact_id)}/history", FactPage,
                                params=_params(offset=offset, limit=limit)))

    def fact_provenance(self, fact_id: str, *, offset: int = 0, limit: int = 50) -> ProvenancePage:
        """GET /v1/facts/{id}/provenance: the episodes behind the fact."""
        return self._call(_Call("GET", f"/v1/facts/{_p(fact_id)}/provenance", ProvenancePage,
                                params=_params(offset=offset, limit=limit)))

    def entity_facts(self, entity_id: str, *, as_of: datetime | None = None, known_at: datetime | None = None,
                     include_superseded: bool = False, predicates: list[str] | None = None,
                     offset: int = 0, limit: int = 50) -> FactPage:
        """GET /v1/facts?entity_id=...: facts about an entity valid at `as_of` as known at `known_at` (UTC), or
        every version with `include_superseded` (then without `as_of`: a 422 naming it)."""
        params = _params(entity_id=entity_id, as_of=as_of, known_at=known_at, include_superseded=include_superseded,
                         offset=offset, limit=limit)
        if predicates:
            params["predicate"] = list(predicates)
        return self._call(_Call("GET", "/v1/facts", FactPage, params=params))

    def correct_fact(self, fact_id: str, *, value: str | None = None, object: EntityRef | dict | None = None,
                     episode_id: str | None = None, idempotency_key: str | None = None) -> AssertOutcome:
        """POST /v1/facts/{id}/correct: expire a wrong fact and supersede it with the right value or object."""
        headers = _idempotency(idempotency_key)
        return self._call(_Call("POST", f"/v1/facts/{_p(fact_id)}/correct", AssertOutcome, headers=headers,
                                json=_body({"value": value, "object": object, "episode_id": episode_id})))

    def retract_facts(self, subject_id: str, predicate: str, *, object_id: str | None = None,
                      value: str | None = None, at: datetime | None = None, episode_id: str | None = None,
                      idempotency_key: str | None = None) -> Retracted:
        """POST /v1/facts/retract: close (never delete) the subject's `predicate` facts valid at `at`."""
        headers = _idempotency(idempotency_key)
        return self._call(_Call("POST", "/v1/facts/retract", Retracted, headers=headers, json=_body({
            "subject_id": subject_id, "predicate": predicate, "object_id": object_id, "value": value, "at": at,
            "episode_id": episode_id})))

    # ---- the turn loop ---------------------------------------------------------------------------------------
    def load_context(self, session_id: str, request: ContextRequest | dict) -> Window:
        """POST /v1/sessions/{id}/context: the token-budgeted window for the next turn."""
        return self._call(_Call("POST", f"/v1/sessions/{_p(session_id)}/context", Window, json=_body(request)))

    def append_turn(self, session_id: str, turn: TurnIn | dict) -> TurnResult:
        """POST /v1/sessions/{id}/turns: the turn's episodes and pin updates (idempotent by its key)."""
        return self._call(_Call("POST", f"/v1/sessions/{_p(session_id)}/turns", TurnResult, json=_body(turn)))

    # ---- episodes, jobs, refusals -----------------------------------------------------------------------------
    def append_episode(self, episode: EpisodeIn | dict) -> Appended:
        """POST /v1/episodes: store one episode (durable before the reply; idempotent by key)."""
        return self._call(_Call("POST", "/v1/episodes", Appended, json=_body(episode)))

    def append_episodes(self, episodes: list[EpisodeIn | dict]) -> BatchAppended:
        """POST /v1/episodes/batch: up to 500 episodes."""
        return self._call(_Call("POST", "/v1/episodes/batch", BatchAppended, json={"episodes": _body(episodes)}))

    def get_episode(self, episode_id: str) -> Episode:
        """GET /v1/episodes/{id}."""
        return self._call(_Call("GET", f"/v1/episodes/{_p(episode_id)}", Episode))

    def session_episodes(self, session_id: str, *, offset: int = 0, limit: int = 50) -> EpisodePage:
        """GET /v1/sessions/{id}/episodes: a session's episodes in order."""
        return self._call(_Call("GET", f"/v1/sessions/{_p(session_id)}/episodes", EpisodePage,
                                params=_params(offset=offset, limit=limit)))

    def job(self, episode_id: str) -> Job:
        """GET /v1/jobs/{episode_id}: the episode's extraction job."""
        return self._call(_Call("GET", f"/v1/jobs/{_p(episode_id)}", Job))

    def failed_jobs(self, *, offset: int = 0, limit: int = 50) -> JobPage:
        """GET /v1/jobs/failed: failed and dead-lettered jobs with their reasons."""
        return self._call(_Call("GET", "/v1/jobs/failed", JobPage, params=_params(offset=offset, limit=limit)))

    def retry_job(self, episode_id: str) -> Job:
        """POST /v1/jobs/{episode_id}/retry."""
        return self._call(_Call("POST", f"/v1/jobs/{_p(episode_id)}/retry", Job))

    def refusals(self, *, offset: int = 0, limit: int = 50) -> RefusalPage:
        """GET /v1/refusals: write-policy refusals, newest first."""
        return self._call(_Call("GET", "/v1/refusals", RefusalPage, params=_params(offset=offset, limit=limit)))

    # ---- search, recall, entities -----------------------------------------------------------------------------
    def search(self, request: SearchRequest | dict) -> SearchResponse:
        """POST /v1/search: hybrid search (full-text, vector, graph; RRF) over facts, entities and episodes."""
        return self._call(_Call("POST", "/v1/search", SearchResponse, json=_body(request)))

    def recall(self, request: RecallRequest | dict) -> RecallResponse:
        """POST /v1/recall: multi-hop paths around one entity or between two."""
        return self._call(_Call("POST", "/v1/recall", RecallResponse, json=_body(request)))

    def introduction(self, from_: str, to: str, *, max_hops: int | None = None, as_of: datetime | None = None,
                     known_at: datetime | None = None, predicates: list[str] | None = None) -> IntroductionResponse:
        """GET /v1/recall/introductions: the shortest connection from `from_` to `to` (entity ids or names) over
        facts valid at `as_of` as known at `known_at` (UTC; default now), within `max_hops` (the route's default,
        4), walking only `predicates` when given (errors name them `predicate[i]`, the route's parameter)."""
        params = _params(to=to, max_hops=max_hops, as_of=as_of, known_at=known_at)
        params["from"] = from_
        if predicates:
            params["predicate"] = list(predicates)
        return self._call(_Call("GET", "/v1/recall/introductions", IntroductionResponse, params=params))

    def who_at(self, org: str, *, member_predicate: str | None = None, predicate: str | None = None,
               value: str | None = None, object_id: str | None = None, via_predicate: str | None = None,
               via_value: str | None = None, as_of: datetime | None = None, known_at: datetime | None = None,
               offset: int = 0, limit: int = 50) -> MembersResponse:
        """GET /v1/recall/who-at: who at organisation `org` (id or name) has a property, e.g.
        `who_at("Globex", predicate="REPORTS_TO", via_predicate="HAS_TITLE", via_value="CFO")`; the members
        by `member_predicate` (the route's default, WORKS_AT) valid at `as_of` as known at `known_at` (UTC)."""
        return self._call(_Call("GET", "/v1/recall/who-at", MembersResponse, params=_params(
            org=org, member_predicate=member_predicate, predicate=predicate, value=value, object_id=object_id,
            via_predicate=via_predicate, via_value=via_value, as_of=as_of, known_at=known_at, offset=offset,
            limit=limit)))

    def find_entities(self, name: str | None = None, kind: str | None = None, *, offset: int = 0,
                      limit: int = 50) -> EntityPage:
        """GET /v1/entities: by name or alias (full-text) and kind."""
        return self._call(_Call("GET", "/v1/entities", EntityPage,
                                params=_params(name=name, kind=kind, offset=offset, limit=limit)))

    def get_entity(self, entity_id: str) -> Entity:
        """GET /v1/entities/{id}."""
        return self._call(_Call("GET", f"/v1/entities/{_p(entity_id)}", Entity))

    def neighbourhood(self, entity_id: str, *, predicates: list[str] | None = None, direction: str = "both",
                      as_of: datetime | None = None, known_at: datetime | None = None,
                      include_superseded: bool = False, offset: int = 0, limit: int = 50) -> NeighbourPage:
        """GET /v1/entities/{id}/neighbourhood: facts one hop away, valid at `as_of` as known at `known_at` (UTC;
        default now), or every version with `include_superseded` (then without `as_of`: a 422 naming it)."""
        params = _params(direction=direction, as_of=as_of, known_at=known_at, include_superseded=include_superseded,
                         offset=offset, limit=limit)
        if predicates:
            params["predicate"] = list(predicates)
        return self._call(_Call("GET", f"/v1/entities/{_p(entity_id)}/neighbourhood", NeighbourPage, params=params))

    def paths(self, entity_id: str, other_id: str, *, max_hops: int = 3, k: int = 5,
              as_of: datetime | None = None, known_at: datetime | None = None,
              predicates: list[str] | None = None) -> PathList:
        """GET /v1/entities/{id}/paths/{other}: up to k shortest paths over facts valid at `as_of` as known at
        `known_at` (UTC; default now), walking only `predicates` when given."""
        params = _params(max_hops=max_hops, k=k, as_of=as_of, known_at=known_at)
        if predicates:
            params["predicate"] = list(predicates)
        return self._call(_Call("GET", f"/v1/entities/{_p(entity_id)}/paths/{_p(other_id)}", PathList, params=params))

    # ---- sessions and pins ------------------------------------------------------------------------------------
    def create_session(self, user_id: str, *, session_id: str | None = None,
                       agent_id: str | None = None) -> SessionInfo:
        """POST /v1/sessions."""
        return self._call(_Call("POST", "/v1/sessions", SessionInfo,
                                json=_body({"id": session_id, "user_id": user_id, "agent_id": agent_id})))

    def get_session(self, session_id: str) -> SessionInfo:
        """GET /v1/sessions/{id}."""
        return self._call(_Call("GET", f"/v1/sessions/{_p(session_id)}", SessionInfo))

    def sessions(self, *, offset: int = 0, limit: int = 50, **filters: Any) -> SessionList:
        """GET /v1/sessions (most recently active first)."""
        return self._call(_Call("GET", "/v1/sessions", SessionList,
                                params=_params(offset=offset, limit=limit, **filters)))

    def summaries(self, session_id: str, *, offset: int = 0, limit: int = 50) -> SummaryList:
        """GET /v1/sessions/{id}/summaries: the session's summary revisions, newest first (rolled-back included)."""
        return self._call(_Call("GET", f"/v1/sessions/{_p(session_id)}/summaries", SummaryList,
                                params=_params(offset=offset, limit=limit)))

    def rollback_summary(self, session_id: str) -> RollbackResult:
        """POST /v1/sessions/{id}/summaries/rollback: mark the current revision rolled back; `current` is the one
        in force afterwards (None: none). ApiError 404 when the session has no active summary."""
        return self._call(_Call("POST", f"/v1/sessions/{_p(session_id)}/summaries/rollback", RollbackResult))

    def compact(self, session_id: str, *, force: bool = False) -> CompactionResult:
        """POST /v1/sessions/{id}/compact: compact now (`force`: even below the threshold)."""
        return self._call(_Call("POST", f"/v1/sessions/{_p(session_id)}/compact", CompactionResult,
                                params=_params(force=force)))

    def consent(self, user_id: str | None = None) -> list[Consent]:
        """GET /v1/consent: the consent records that apply to `user_id` (tenant-wide ones included)."""
        return self._call(_Call("GET", "/v1/consent", list[Consent], params=_params(user_id=user_id)))

    def set_consent(self, consent: ConsentIn | dict) -> Consent:
        """PUT /v1/consent: whether preferences may cross sessions, for the tenant or one user."""
        return self._call(_Call("PUT", "/v1/consent", Consent, json=_body(consent)))

    def pins(self, session_id: str, *, offset: int = 0, limit: int = 50) -> PinList:
        """GET /v1/sessions/{id}/pins."""
        return self._call(_Call("GET", f"/v1/sessions/{_p(session_id)}/pins", PinList,
                                params=_params(offset=offset, limit=limit)))

    def get_pin(self, session_id: str, key: str) -> Pin:
        """GET /v1/sessions/{id}/pins/{key}."""
        return self._call(_Call("GET", f"/v1/sessions/{_p(session_id)}/pins/{_p(key)}", Pin))

    def put_pin(self, session_id: str, key: str, value: dict[str, Any], *, version: int | None = None) -> Pin:
        """PUT /v1/sessions/{id}/pins/{key}: a typed value at the version read (0/None: new). Stale: ApiError 409."""
        return self._call(_Call("PUT", f"/v1/sessions/{_p(session_id)}/pins/{_p(key)}", Pin,
                                json=_body({"value": value, "version": version})))

    def delete_pin(self, session_id: str, key: str, *, version: int) -> None:
        """DELETE /v1/sessions/{id}/pins/{key} at the version read."""
        return self._call(_Call("DELETE", f"/v1/sessions/{_p(session_id)}/pins/{_p(key)}", None,
                                params=_params(version=version)))

    def pin_keys(self, *, offset: int = 0, limit: int = 50) -> PinKeyList:
        """GET /v1/pin-keys: the tenant's pin key definitions, by key."""
        return self._call(_Call("GET", "/v1/pin-keys", PinKeyList, params=_params(offset=offset, limit=limit)))

    def define_pin_key(self, definition: PinKeyDef | dict) -> PinKeyDef:
        """PUT /v1/pin-keys/{key}: define (or redefine) a tenant pin key and its type."""
        key = definition.key if isinstance(definition, PinKeyDef) else definition["key"]
        return self._call(_Call("PUT", f"/v1/pin-keys/{_p(key)}", PinKeyDef, json=_body(definition)))

    # ---- memories and forgetting ------------------------------------------------------------------------------
    def memories(self, user_id: str, *, offset: int = 0, limit: int = 50) -> MemoryPage:
        """GET /v1/memories?user_id=...: a user's memories with provenance."""
        return self._call(_Call("GET", "/v1/memories", MemoryPage,
                                params=_params(user_id=user_id, offset=offset, limit=limit)))

    def export_memories(self, user_id: str) -> dict[str, Any]:
        """GET /v1/memories/export?user_id=...: everything stored about a user."""
        return self._call(_Call("GET", "/v1/memories/export", dict[str, Any], params=_params(user_id=user_id)))

    def memory_candidates(self, user_id: str, *, offset: int = 0, limit: int = 50) -> CandidateList:
        """GET /v1/memories/candidates: held sensitive candidates awaiting confirmation."""
        return self._call(_Call("GET", "/v1/memories/candidates", CandidateList,
                                params=_params(user_id=user_id, offset=offset, limit=limit)))

    def confirm_candidate(self, user_id: str, fact_id: str) -> AssertOutcome:
        """POST /v1/memories/candidates/{fact_id}/confirm: the held candidate becomes a user_confirmed fact."""
        return self._call(_Call("POST", f"/v1/memories/candidates/{_p(fact_id)}/confirm", AssertOutcome,
                                json={"user_id": user_id}))

    def reject_candidate(self, user_id: str, fact_id: str) -> Receipt:
        """POST /v1/memories/candidates/{fact_id}/reject: the candidate is erased; returns the receipt."""
        return self._call(_Call("POST", f"/v1/memories/candidates/{_p(fact_id)}/reject", Receipt,
                                json={"user_id": user_id}))

    def correct_memory(self, user_id: str, fact_id: str, *, value: str | None = None,
                       object: EntityRef | dict | None = None) -> AssertOutcome:
        """PATCH /v1/memories/{fact_id}: the user's correction (exactly one of `value`, `object`), a supersession
        with source user_explicit."""
        return self._call(_Call("PATCH", f"/v1/memories/{_p(fact_id)}", AssertOutcome,
                                json=_body({"user_id": user_id, "value": value, "object": object})))

    def delete_memory(self, user_id: str, fact_id: str) -> Receipt:
        """DELETE /v1/memories/{fact_id}?user_id=...: erase one of the user's memories; returns the receipt."""
        return self._call(_Call("DELETE", f"/v1/memories/{_p(fact_id)}", Receipt, params=_params(user_id=user_id)))

    def forget(self, *, user_id: str | None = None, session_id: str | None = None, episode_id: str | None = None,
               fact_id: str | None = None) -> Receipt:
        """POST /v1/forget: erase exactly one target, cascading along provenance; returns the receipt."""
        return self._call(_Call("POST", "/v1/forget", Receipt, json=_body({
            "user_id": user_id, "session_id": session_id, "episode_id": episode_id, "fact_id": fact_id})))

    def request(self, method: str, path: str, *, model: Any = None, params: dict[str, Any] | None = None,
                json: Any = None, headers: dict[str, str] | None = None) -> Any:
        """Any route by method and path (say a route newer than this client), parsed into `model` when given."""
        return self._call(_Call(method, path, model, params=_params(**(params or {})), json=_body(json),
                                headers=headers or {}))

    # ---- ontology ---------------------------------------------------------------------------------------------
    def predicates(self, *, offset: int = 0, limit: int = 500) -> PredicatePage:
        """GET /v1/ontology/predicates: the shipped predicates plus the tenant's own."""
        return self._call(_Call("GET", "/v1/ontology/predicates", PredicatePage,
                                params=_params(offset=offset, limit=limit)))

    def add_predicate(self, predicate: Predicate | dict) -> Predicate:
        """POST /v1/ontology/predicates: add or replace one of the tenant's predicates."""
        return self._call(_Call("POST", "/v1/ontology/predicates", Predicate, json=_body(predicate)))

    # ---- admin (admin keys only) ------------------------------------------------------------------------------
    def create_key(self, tenant_id: str, role: str, name: str | None = None) -> KeyCreated:
        """POST /v1/admin/tenants/{tenant}/keys -> the key and its secret (shown once)."""
        return self._call(_Call("POST", f"/v1/admin/tenants/{_p(tenant_id)}/keys", KeyCreated,
                                json=_body({"role": role, "name": name})))

    def list_keys(self, tenant_id: str, *, offset: int = 0, limit: int = 50) -> KeyList:
        """GET /v1/admin/tenants/{tenant}/keys (prefixes only)."""
        return self._call(_Call("GET", f"/v1/admin/tenants/{_p(tenant_id)}/keys", KeyList,
                                params=_params(offset=offset, limit=limit)))

    def revoke_key(self, tenant_id: str, key_id: str) -> ApiKey:
        """POST /v1/admin/tenants/{tenant}/keys/{id}/revoke."""
        return self._call(_Call("POST", f"/v1/admin/tenants/{_p(tenant_id)}/keys/{_p(key_id)}/revoke", ApiKey))

    def rotate_key(self, tenant_id: str, key_id: str) -> KeyCreated:
        """POST /v1/admin/tenants/{tenant}/keys/{id}/rotate -> the new key and its secret."""
        return self._call(_Call("POST", f"/v1/admin/tenants/{_p(tenant_id)}/keys/{_p(key_id)}/rotate", KeyCreated))

    def tenants(self, *, offset: int = 0, limit: int = 50) -> TenantList:
        """GET /v1/admin/tenants: tenants that have keys, by tenant id, with their key counts."""
        return self._call(_Call("GET", "/v1/admin/tenants", TenantList, params=_params(offset=offset, limit=limit)))

    def retention(self, tenant_id: str) -> RetentionView:
        """GET /v1/admin/tenants/{tenant}/retention: the settings and the effective fact-class TTLs (days)."""
        return self._call(_Call("GET", f"/v1/admin/tenants/{_p(tenant_id)}/retention", RetentionView))

    def set_retention(self, tenant_id: str, settings: RetentionSettings | dict) -> RetentionView:
        """PUT /v1/admin/tenants/{tenant}/retention: replace the settings; `retain_until` of the tenant's facts,
        episodes and sessions is recomputed (`recomputed` counts them; sessions: those that changed)."""
        return self._call(_Call("PUT", f"/v1/admin/tenants/{_p(tenant_id)}/retention", RetentionView,
                                json=_body(settings)))

    def place_hold(self, tenant_id: str, reason: str, *, user_id: str | None = None, session_id: str | None = None,
                   episode_id: str | None = None) -> Hold:
        """POST /v1/admin/tenants/{tenant}/holds: a legal hold on exactly one target (blocks erasure and expiry)."""
        return self._call(_Call("POST", f"/v1/admin/tenants/{_p(tenant_id)}/holds", Hold, json=_body({
            "user_id": user_id, "session_id": session_id, "episode_id": episode_id, "reason": reason})))

    def holds(self, tenant_id: str, *, offset: int = 0, limit: int = 50) -> HoldList:
        """GET /v1/admin/tenants/{tenant}/holds."""
        return self._call(_Call("GET", f"/v1/admin/tenants/{_p(tenant_id)}/holds", HoldList,
                                params=_params(offset=offset, limit=limit)))

    def release_hold(self, tenant_id: str, hold_id: str) -> Hold:
        """DELETE /v1/admin/tenants/{tenant}/holds/{id}: retention applies again."""
        return self._call(_Call("DELETE", f"/v1/admin/tenants/{_p(tenant_id)}/holds/{_p(hold_id)}", Hold))

    def sweep(self, tenant_id: str | None = None, *, all_tenants: bool = False) -> SweepReceipt:
        """POST /v1/admin/sweep: remove expired data now, of one tenant or (`all_tenants`) of every tenant."""
        return self._call(_Call("POST", "/v1/admin/sweep", SweepReceipt,
                                json=_body({"tenant_id": tenant_id, "all_tenants": all_tenants or None})))

    def audit(self, tenant_id: str, *, offset: int = 0, limit: int = 50) -> AuditList:
        """GET /v1/admin/tenants/{tenant}/audit: governance audit records, newest first."""
        return self._call(_Call("GET", f"/v1/admin/tenants/{_p(tenant_id)}/audit", AuditList,
                                params=_params(offset=offset, limit=limit)))

    # ---- operations (no key needed) ---------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """GET /healthz: {"status": "ok"} while the process runs (liveness; Neo4j is not checked)."""
        return self._call(_Call("GET", "/healthz", dict[str, Any]))

    def ready(self) -> dict[str, Any]:
        """GET /readyz: {"status": "ready", "neo4j": "ok", "vector_search": "ok" or "off: <reason>"}; raises
        ApiError(503) when Neo4j is unreachable."""
        return self._call(_Call("GET", "/readyz", dict[str, Any]))

    def metrics(self) -> str:
        """GET /metrics: the Prometheus exposition text."""
        return self._call(_Call("GET", "/metrics", str))


def _headers(api_key: str | None, headers: Mapping[str, str] | None) -> dict[str, str]:
    """The client's default headers. `ValueError` for an empty or non-ASCII `api_key` (None sends no key), rather
    than a call that goes out without it or httpx's UnicodeEncodeError."""
    out = dict(headers or {})
    if api_key is not None:
        if not re.match(PRINTABLE_ASCII, api_key):
            raise ValueError("api_key: an API key is printable ASCII (gm_...); pass None for no key")
        out["Authorization"] = f"Bearer {api_key}"
    return out


def _idempotency(key: str | None) -> dict[str, str]:
    """The `Idempotency-Key` header for `key` (None: no header). `ValueError` for one the server would refuse
    (empty, or not printable ASCII: `graphmem.models.PRINTABLE_ASCII`) instead of a call sent without a key."""
    if key is None:
        return {}
    if not re.match(PRINTABLE_ASCII, key) or len(key) > 200:
        raise ValueError("idempotency_key: 1-200 printable ASCII characters (the Idempotency-Key header)")
    return {"Idempotency-Key": key}


class Client(_Routes):
    """Synchronous client. `base_url` like "http://127.0.0.1:8080"; `timeout` in seconds. Use as a context
    manager or call `close()`. Raises `ApiError` for error replies and `httpx.HTTPError` for transport failures."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 headers: Mapping[str, str] | None = None, transport: httpx.BaseTransport | None = None):
        self.http = httpx.Client(base_url=base_url, headers=_headers(api_key, headers), timeout=timeout,
                                 transport=transport)

    def _call(self, call: _Call) -> Any:
        r = self.http.request(call.method, call.path, params=call.params, json=call.json, headers=call.headers)
        return _parse(call, r)

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


class AsyncClient(_Routes):
    """Asynchronous client with the same methods as `Client`; each returns an awaitable of the same type."""

    def __init__(self, base_url: str, api_key: str | None = None, *, timeout: float = 30.0,
                 headers: Mapping[str, str] | None = None, transport: httpx.AsyncBaseTransport | None = None):
        self.http = httpx.AsyncClient(base_url=base_url, headers=_headers(api_key, headers), timeout=timeout,
                                      transport=transport)

    async def _run(self, call: _Call) -> Any:
        r = await self.http.request(call.method, call.path, params=call.params, json=call.json, headers=call.headers)
        return _parse(call, r)

    def _call(self, call: _Call) -> Any:
        return self._run(call)

    async def aclose(self) -> None:
        await self.http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
