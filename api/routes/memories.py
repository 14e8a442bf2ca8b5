"""User-visible memory: list, export, correct and delete a user's facts, and confirm or reject held candidates.
The tenant comes from the key; `user_id` says whose memory (docs/governance.md says which facts are a user's)."""
from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, Field

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.ids import FactId, UserId
from api.json_body import UniqueKeysRoute
from graphmem.governance.models import MemoryPage, Receipt
from graphmem.ingest.refusals import Refusal
from graphmem.models import VISIBLE, AssertOutcome, EntityRef, Input, UserIdText

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/memories", tags=["memories"])

MEMORY_EXAMPLE = {"items": [{"fact": {"id": "f1", "predicate": "PREFERS_CHANNEL", "statement": "Dana prefers email",
                                      "value": "email", "status": "current", "source": "user_explicit"},
                             "subject_name": "Dana", "provenance": [{
                                 "episode_id": "e1", "occurred_at": "2024-05-01T09:00:00Z", "source": "user_explicit",
                                 "confidence": 1.0, "text": "learned on 2024-05-01 from episode e1, source "
                                                            "user_explicit, confidence 1"}],
                             "other_sources": 0, "expired_sources": 0}], "total": 1, "offset": 0, "limit": 50}


class UserBody(Input):
    user_id: UserIdText = Field(examples=["user-42"])


class Correction(UserBody):
    """The right value: a literal `value` or an `object` entity (exactly one)."""

    value: str | None = Field(default=None, min_length=1, pattern=VISIBLE, examples=["phone"])
    object: EntityRef | None = None


class CandidateList(BaseModel):
    """A user's held candidates (a page) and the write-policy refusals of the user's episodes (the same page of
    them, newest first), each as `GET /v1/refusals` lists it."""

    candidates: MemoryPage
    refusals: list[Refusal] = Field(description="write-policy refusals recorded for the user's episodes")


@router.get("", response_model=MemoryPage, summary="A user's memories with provenance (newest first)",
            responses={200: {"content": {"application/json": {"example": MEMORY_EXAMPLE}}}})
def list_memories(user_id: UserId, who: Reader, services: ServicesDep, page: PageDep) -> MemoryPage:
    return services.governance.memories.list(who.tenant_id, user_id, page.offset, page.limit)


@router.get("/export", summary="Everything stored about a user, as one JSON document",
            response_class=StreamingResponse,
            responses={200: {"content": {"application/json": {"schema": {"type": "object"}, "example": {
                "user_id": "user-42", "tenant_id": "acme", "exported_at": "2024-05-01T09:00:00Z", "facts": [],
                "candidates": [], "episodes": [], "sessions": [], "pins": [], "summaries": [], "refusals": []}}}}})
def export(user_id: UserId, who: Reader, services: ServicesDep) -> StreamingResponse:
    # streamed: the episodes are read and sent a page at a time (a user of 2,800 episodes of 99k characters read
    # whole was a 503); what fails before the first page is still a problem+json answer
    return StreamingResponse(services.governance.memories.export_stream(who.tenant_id, user_id),
                             media_type="application/json")


@router.get("/candidates", response_model=CandidateList,
            summary="A user's held candidates and write-policy refusals, for confirmation or rejection")
def candidates(user_id: UserId, who: Reader, services: ServicesDep, page: PageDep) -> CandidateList:
    mem = services.governance.memories
    return CandidateList(candidates=mem.candidates(who.tenant_id, user_id, page.offset, page.limit),
                         refusals=mem.refusals(who.tenant_id, user_id)[page.offset:page.offset + page.limit])


@router.post("/candidates/{fact_id}/confirm", response_model=AssertOutcome,
             summary="Confirm a candidate: it becomes a user_confirmed fact under the normal assertion rules",
             responses={200: {"content": {"application/json": {"example": {"action": "created", "fact_id": "f9"}}}}})
def confirm(fact_id: FactId, body: UserBody, who: Writer, services: ServicesDep) -> AssertOutcome:
    return services.governance.memories.confirm(who.tenant_id, body.user_id, fact_id)


@router.post("/candidates/{fact_id}/reject", response_model=Receipt,
             summary="Reject a candidate: erased, unless another episode than the user's also raised it",
             responses={200: {"content": {"application/json": {"example": {
                 "action": "reject", "target_kind": "fact", "at": "2024-05-01T09:00:00Z", "counts": {"facts": 1}}}}}})
def reject(fact_id: FactId, body: UserBody, who: Writer, services: ServicesDep) -> Receipt:
    return services.governance.memories.reject(who.tenant_id, body.user_id, fact_id, actor=who.key_id)


@router.patch("/{fact_id}", response_model=AssertOutcome,
              summary="Correct a memory (a supersession with source user_explicit)",
              responses={200: {"content": {"application/json": {"example": {
                  "action": "corrected", "fact_id": "f10", "closed_fact_id": "f1"}}}}})
def correct(fact_id: FactId, body: Correction, who: Writer, services: ServicesDep) -> AssertOutcome:
    return services.governance.memories.correct(who.tenant_id, body.user_id, fact_id, value=body.value,
                                                object=body.object)


@router.delete("/{fact_id}", response_model=Receipt,
               summary="Delete a memory: the user's word on the fact goes, and the fact unless another episode states it",
               responses={200: {"content": {"application/json": {"example": {
                   "action": "forget", "target_kind": "fact", "at": "2024-05-01T09:00:00Z", "counts": {"facts": 1}}}}}})
def delete(fact_id: FactId, user_id: UserId, who: Writer, services: ServicesDep) -> Receipt:
    return services.governance.memories.delete(who.tenant_id, user_id, fact_id, actor=who.key_id)
