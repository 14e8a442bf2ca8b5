"""Fact routes: assert explicit facts (batch), read one, its history and provenance, list an entity's facts,
correct and retract. The tenant is the API key's.

Every write carries provenance. A fact sent without an `episode_id` gets one: the call itself is recorded as an
episode of kind "event" (through the ingest service, like every other episode) and its id becomes the facts'
provenance. An `Idempotency-Key` header makes that episode, and so the whole call, safe to retry
(`api.idempotency`); sent with writes that name their own episodes, the call is recorded all the same, only to
replay its answer and refuse the key with another body (the facts' provenance stays the episodes named).
"""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query
from pydantic import BaseModel, Field, model_validator

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.idempotency import recorded_call
from api.ids import FactId
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.errors import InvalidInput
from graphmem.models import (PRINTABLE_ASCII, VISIBLE, AssertOutcome, EntityRef, EpisodeId, Fact, FactIn, Id, Input,
                             PredicateName, Provenance, UtcDatetime, Visible)

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/facts", tags=["facts"])

FACT_EXAMPLE = {"subject": {"kind": "Person", "name": "Dana Reyes", "email": "dana@reyes.io"},
                "predicate": "WORKS_AT", "object": {"kind": "Organization", "name": "Globex", "domain": "globex.com"},
                "valid_from": "2021-06-14T00:00:00Z", "source": "user_explicit"}
IdempotencyKey = Annotated[str | None, Header(alias="Idempotency-Key", min_length=1, max_length=200,
                                             pattern=PRINTABLE_ASCII, description=(
    "Makes the call safe to retry: the episode recording it is created once per key (1-200 printable ASCII "
    "characters, as the IETF draft's sf-string; a header sent empty is a 422, not a call without a key)."))]


class FactsAssert(Input):
    """A batch of explicit facts (1..1000), asserted in order under the write policy and the temporal rules."""

    facts: list[FactIn] = Field(min_length=1, max_length=1000, examples=[[FACT_EXAMPLE]])


class FactsAsserted(BaseModel):
    """One outcome per fact, in request order. `episode_id` is the event episode recorded for facts sent without
    an `episode_id` (null when every fact named its own)."""

    outcomes: list[AssertOutcome] = Field(examples=[[{"action": "created", "fact_id": "9f1c0e1a2b3c4d5e6f708192a3b4c5d6"}]])
    episode_id: str | None = None


class FactPage(ItemPage[Fact]):
    """A page of facts."""



class ProvenancePage(ItemPage[Provenance]):
    """A page of provenance records (the episodes behind a fact)."""



class FactCorrection(Input):
    """The right value for a wrong fact: exactly one of `value` (a literal) or `object` (an entity).
    The old fact is expired in transaction time and superseded by a `user_explicit` fact with the same validity."""

    value: str | None = Field(default=None, min_length=1, examples=["VP Procurement"])
    object: EntityRef | None = None
    episode_id: EpisodeId | None = Field(default=None, description="The episode that carried the correction; "
                                   "omitted = the call is recorded as an event episode.")

    @model_validator(mode="after")
    def _one(self) -> "FactCorrection":
        if (self.value is None) == (self.object is None):
            raise InvalidInput("a correction needs exactly one of value or object", field="value")
        return self


class FactRetraction(Input):
    """Close (never delete) the subject's `predicate` facts valid at `at` (default: the episode's time), optionally
    only the one with this `object_id` or `value`."""

    subject_id: Id = Field(examples=["5b9d3c0e8f7a41d2a6e4b1c9d8f7e6a5"])
    predicate: PredicateName = Field(examples=["PREFERS_CHANNEL"])
    object_id: Id | None = None
    value: str | None = Field(default=None, min_length=1, pattern=VISIBLE, examples=["phone"])
    at: UtcDatetime | None = None
    episode_id: EpisodeId | None = None

    @model_validator(mode="after")
    def _at_most_one(self) -> "FactRetraction":
        if self.object_id is not None and self.value is not None:
            raise ValueError("give object_id or value, not both")
        return self


class Retracted(BaseModel):
    """The closed fact ids and the episode recorded as the retraction's provenance."""

    fact_ids: list[str] = Field(examples=[["9f1c0e1a2b3c4d5e6f708192a3b4c5d6"]])
    episode_id: str


@router.post("", response_model=FactsAsserted, summary="Assert explicit facts (batch)")
def assert_facts(body: FactsAssert, who: Writer, services: ServicesDep,
                 idempotency_key: IdempotencyKey = None) -> FactsAsserted:
    facts = body.facts
    own = all(f.episode_id for f in facts)
    if own and idempotency_key is None:
        return FactsAsserted(outcomes=services.ingest.assert_facts(who.tenant_id, facts), episode_id=None)
    ontology = services.graph.ontology(who.tenant_id)
    for i, f in enumerate(facts):  # an unknown predicate fails before the call is recorded
        ontology.get(f.predicate, field=f"facts[{i}].predicate")
    with recorded_call(services, who, "POST /v1/facts", body, idempotency_key) as call:
        if call.kept:
            return FactsAsserted.model_validate_json(call.kept)
        facts = [f if f.episode_id else f.model_copy(update={"episode_id": call.episode_id}) for f in facts]
        answer = FactsAsserted(outcomes=services.ingest.assert_facts(who.tenant_id, facts),
                               episode_id=None if own else call.episode_id)
        call.keep(answer)
        return answer


@router.get("", response_model=FactPage, summary="An entity's facts (valid at as_of, as known at known_at)",
            description="By predicate, then oldest valid_from first (then recorded_at, id), as the neighbourhood.")
def list_facts(who: Reader, services: ServicesDep, page: PageDep,
               entity_id: Annotated[str, Query(min_length=1, pattern=VISIBLE, description="The entity the facts are about "
                                                "(as subject or object)."), Visible],
               as_of: Annotated[UtcDatetime | None, Query(description=(
                   "Valid time (UTC); default now. Not with include_superseded, which lists every version (a 422 "
                   "naming as_of)."))] = None,
               known_at: Annotated[UtcDatetime | None, Query(description="Transaction time (UTC); default now.")] = None,
               include_superseded: Annotated[bool, Query(description=(
                   "Also facts not valid at as_of: ended, superseded, retracted or not yet started. A corrected fact "
                   "was never true: it shows with a known_at before the correction, and in the fact's history."))] = False,
               predicate: Annotated[list[PredicateName] | None,
                                    Query(description="Only these predicates (repeatable).")] = None,
               ) -> FactPage:
    facts = services.graph.facts_about(who.tenant_id, entity_id, as_of=as_of, known_at=known_at,
                                       include_superseded=include_superseded, predicates=predicate,
                                       offset=page.offset, limit=page.limit)
    return FactPage.of(facts, page)


@router.get("/{fact_id}", response_model=Fact, summary="One fact")
def get_fact(fact_id: FactId, who: Reader, services: ServicesDep) -> Fact:
    return services.graph.get_fact(who.tenant_id, fact_id)


@router.get("/{fact_id}/history", response_model=FactPage,
            summary="The fact's supersession timeline, oldest valid_from first")
def fact_history(fact_id: FactId, who: Reader, services: ServicesDep, page: PageDep) -> FactPage:
    return FactPage.of(services.graph.fact_history(who.tenant_id, fact_id, offset=page.offset, limit=page.limit), page)


@router.get("/{fact_id}/provenance", response_model=ProvenancePage,
            summary="The episodes that said, confirmed, retracted or corrected the fact")
def fact_provenance(fact_id: FactId, who: Reader, services: ServicesDep, page: PageDep) -> ProvenancePage:
    items = services.graph.fact_provenance(who.tenant_id, fact_id, offset=page.offset, limit=page.limit)
    return ProvenancePage.of(items, page)


@router.post("/{fact_id}/correct", response_model=AssertOutcome,
             summary="Correct a wrong fact (expire it, supersede it with the right value)",
             responses={200: {"content": {"application/json": {"example": {
                 "action": "corrected", "fact_id": "0a1b2c3d4e5f60718293a4b5c6d7e8f9",
                 "closed_fact_id": "9f1c0e1a2b3c4d5e6f708192a3b4c5d6"}}}}})
def correct_fact(fact_id: FactId, body: FactCorrection, who: Writer, services: ServicesDep,
                 idempotency_key: IdempotencyKey = None) -> AssertOutcome:
    services.graph.get_fact(who.tenant_id, fact_id)  # 404 before anything is recorded

    def correct(episode_id: str) -> AssertOutcome:
        return services.graph.correct(who.tenant_id, fact_id, episode_id, value=body.value, object=body.object)
    if body.episode_id and idempotency_key is None:
        return correct(body.episode_id)
    with recorded_call(services, who, f"POST /v1/facts/{fact_id}/correct", body, idempotency_key) as call:
        if call.kept:
            return AssertOutcome.model_validate_json(call.kept)
        episode_id = body.episode_id or call.episode_id
        done = services.graph.corrected_by(who.tenant_id, fact_id, episode_id) if call.replayed else None
        answer = done or correct(episode_id)
        call.keep(answer)
        return answer


@router.post("/retract", response_model=Retracted, summary="Retract facts (close them with provenance; nothing is deleted)")
def retract_facts(body: FactRetraction, who: Writer, services: ServicesDep,
                  idempotency_key: IdempotencyKey = None) -> Retracted:
    services.graph.get_entity(who.tenant_id, body.subject_id, "subject_id")   # 404 before anything is recorded

    def retract(episode_id: str) -> Retracted:
        ids = services.graph.retract(who.tenant_id, body.subject_id, body.predicate, episode_id, at=body.at,
                                     object_id=body.object_id, value=body.value)
        return Retracted(fact_ids=ids, episode_id=episode_id)
    if body.episode_id and idempotency_key is None:
        return retract(body.episode_id)
    with recorded_call(services, who, "POST /v1/facts/retract", body, idempotency_key) as call:
        if call.kept:
            return Retracted.model_validate_json(call.kept)
        episode_id = body.episode_id or call.episode_id
        done = services.graph.retracted_by(who.tenant_id, episode_id) if call.replayed else []
        answer = Retracted(fact_ids=done, episode_id=episode_id) if done else retract(episode_id)
        call.keep(answer)
        return answer
