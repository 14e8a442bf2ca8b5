"""Ontology routes: the tenant's predicates (the shipped CRM ontology plus its own) and adding a predicate."""
from __future__ import annotations

from fastapi import APIRouter, HTTPException
from pydantic import ConfigDict, Field

from api.deps import PageDep, Reader, ServicesDep, Writer
from api.json_body import UniqueKeysRoute
from api.pages import ItemPage
from graphmem.errors import InvalidInput
from graphmem.ontology import SENSITIVE_CLASSES, Predicate

router = APIRouter(route_class=UniqueKeysRoute, prefix="/v1/ontology", tags=["ontology"])

PREDICATE_EXAMPLE = {"name": "MENTORS", "cardinality": "multi", "subject_kinds": ["Person"],
                     "object_kinds": ["Person"], "fact_class": "relationship", "sensitivity": "none",
                     "template": "{subject} mentors {object}"}


class PredicatePage(ItemPage[Predicate]):
    """A page of predicates sorted by name. `fact_classes` lists the classes a predicate may name."""

    items: list[Predicate] = Field(examples=[[PREDICATE_EXAMPLE]])
    fact_classes: list[str] = Field(examples=[["employment", "preference", "relationship", "role"]])


class PredicateIn(Predicate):
    """A predicate as sent (unknown fields refused; the stored record carries more). `ttl_days` is a JSON integer
    of 1-36500 days, as retention settings' are (`true` was stored as 1 day, and 10^9 days overflowed every write)."""

    model_config = ConfigDict(extra="forbid")
    ttl_days: int | None = Field(default=None, ge=1, le=36500, strict=True)


@router.get("/predicates", response_model=PredicatePage, summary="The tenant's predicates (shipped and its own)")
def list_predicates(who: Reader, services: ServicesDep, page: PageDep) -> PredicatePage:
    onto = services.graph.ontology(who.tenant_id)
    items = [onto.predicates[n] for n in sorted(onto.predicates)]
    return PredicatePage.of(items[page.offset:page.offset + page.limit], page, fact_classes=sorted(onto.class_ttl_days))


@router.post("/predicates", response_model=Predicate, status_code=201,
             summary="Add (or replace) one of the tenant's predicates",
             openapi_extra={"requestBody": {"content": {"application/json": {"example": PREDICATE_EXAMPLE}}}})
def add_predicate(body: PredicateIn, who: Writer, services: ServicesDep) -> Predicate:
    ontology = services.graph.ontology(who.tenant_id)
    current = ontology.predicates.get(body.name)
    if (body.name in services.graph.shipped_ontology.predicates and who.role != "admin"
            and (current is None or current.model_dump() != Predicate.model_validate(body.model_dump()).model_dump())):
        raise HTTPException(403, f"{body.name} is a shipped predicate: redefining it for the tenant needs an admin key")
    classes = ontology.class_ttl_days
    if body.fact_class not in classes:
        raise InvalidInput(f"unknown fact_class {body.fact_class!r}; known: {', '.join(sorted(classes))}",
                           field="fact_class")
    if (body.sensitivity != "none" or body.fact_class in SENSITIVE_CLASSES) and body.sensitivity != body.fact_class:
        # one meaning of sensitive: the candidate rule reads a predicate's sensitivity, a context window a fact's class
        raise InvalidInput(f"sensitivity {body.sensitivity!r} and fact_class {body.fact_class!r} disagree: a sensitive "
                           f"predicate ({', '.join(SENSITIVE_CLASSES)}) has that class as its fact_class and its "
                           "sensitivity", field="sensitivity")
    return services.graph.add_predicate(who.tenant_id, body)
