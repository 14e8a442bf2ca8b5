"""Neo4j keeps one plan per query text and parameter types, and a null is a type of its own: a search with a filter
never used before was planned anew, 1.5-1.7 s for search/rank and 0.2-1 s for the path queries (docs/benchmarks/
recall.md, "Cold plans"). So every option a recall call may leave out travels inside one map parameter, `$opt`,
whose type does not depend on what it holds. Here: the parameter types each recall query receives are the same
whichever options a call gives (read off the real calls, which run against the real Neo4j and must still answer),
and the filters inside `$opt` still filter; the API's warm-up sends each of these reads in those same shapes."""
from __future__ import annotations

import uuid

import pytest

from graphmem.ops import WARM_UP_TENANT
from graphmem.recall.models import SearchRequest
from graphmem.recall.service import RecallService
from tests.test_recall_service import build_crm


def neo4j_type(value) -> str:
    """The type Neo4j keys a plan by for one parameter value: a map is a map whatever it holds; a list is typed by
    its elements (an empty list apart from a list of strings)."""
    if value is None:
        return "NULL"
    if isinstance(value, dict):
        return "MAP"
    if isinstance(value, (list, tuple)):
        inner = {neo4j_type(v) for v in value}
        return "LIST OF " + (inner.pop() if len(inner) == 1 else "ANY" if inner else "NOTHING")
    return type(value).__name__.upper()


class Recording:
    """The test session's `Database`, noting the parameter types of every named read it runs."""

    def __init__(self, db):
        self._db, self.shapes = db, {}

    def __getattr__(self, name):
        return getattr(self._db, name)

    def _note(self, name: str, params: dict) -> None:
        if name == "search/rank" and not params["targets"]:
            name += " (ids only)"     # the rare second read of winners not prefetched: a shape of its own
        self.shapes.setdefault(name, set()).add(tuple(sorted((k, neo4j_type(v)) for k, v in params.items())))

    def rows(self, name, /, warmed=False, **params):
        self._note(name, params)
        return self._db.rows(name, warmed=warmed, **params)

    def read_one(self, name, /, warmed=False, **params):
        self._note(name, params)
        return self._db.read_one(name, warmed=warmed, **params)


@pytest.fixture(scope="module")
def crm(graph):
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    return tenant, build_crm(graph, tenant)


def test_every_option_mix_of_a_recall_query_has_one_plan(db, graph, crm):
    tenant, ids = crm
    rec = Recording(db)
    recall = RecallService(rec, graph, embedder=None)
    searches = [{}, {"predicates": ["WORKS_AT"]}, {"entity_kinds": ["Organization"]}, {"session_id": "s2"},
                {"user_id": "u1"}, {"occurred_after": "2023-06-01T00:00:00Z"},
                {"occurred_before": "2023-06-01T00:00:00Z", "include_superseded": True},
                {"predicates": ["KNOWS"], "entity_kinds": ["Person"], "session_id": "s2", "user_id": "u1",
                 "occurred_after": "2023-01-01T00:00:00Z", "occurred_before": "2024-01-01T00:00:00Z"}]
    answers = {}
    for opts in searches:
        hits = recall.search(tenant, SearchRequest(query="Dana Globex Frank", targets=["fact"], **opts)).hits
        answers[tuple(opts)] = {(h.fact.predicate, h.fact.subject_id) for h in hits}
    # the filters still filter, inside the map
    assert {p for p, _ in answers[()]} >= {"WORKS_AT", "KNOWS", "HAS_TITLE"}
    assert {p for p, _ in answers[("predicates",)]} == {"WORKS_AT"}
    assert {s for _, s in answers[("session_id",)]} == {ids["Sam Me"], ids["Dana Smith"], ids["Frank Wu"]}  # s2's
    assert answers[("occurred_before", "include_superseded")] == {("WORKS_AT", ids["Dana Smith"])}  # Acme, in January
    assert answers[tuple(searches[-1])] == {("KNOWS", ids["Sam Me"]), ("KNOWS", ids["Dana Smith"])}

    for predicates in (None, ["KNOWS", "WORKS_AT"]):
        assert recall.paths_around(tenant, ids["Sam Me"], predicates=predicates)
        assert recall.paths_between(tenant, ids["Sam Me"], ids["Initech"], predicates=predicates)
        assert recall.neighbours(tenant, ids["Dana Smith"], predicates=predicates)
    for cond in ({}, {"predicate": "REPORTS_TO"}, {"predicate": "HAS_TITLE", "value": "CFO"},
                 {"predicate": "REPORTS_TO", "object_id": ids["Carol Jones"]},
                 {"predicate": "REPORTS_TO", "via_predicate": "HAS_TITLE", "via_value": "cfo"}):
        assert recall.who_at(tenant, ids["Globex"], **cond), cond
    for name, kind in ((None, None), ("Globex", None), (None, "Person"), ("Dana", "Person")):
        recall.find_entities(tenant, name=name, kind=kind)

    for query in ("search/rank", "recall/around", "recall/between", "recall/neighbours", "recall/who_at",
                  "search/entities_by_name", "search/entities_by_text"):
        assert len(rec.shapes[query]) == 1, (query, rec.shapes[query])

    # the API's warm-up (at start and every few seconds: graphmem.ops.warm_up) sends each of these reads in the
    # shape the calls above sent it, so a request after a start or a replan finds its plan made
    warm = Recording(db)
    warming = RecallService(warm, graph, embedder=None)
    warming.warm_up(WARM_UP_TENANT)
    warming.warm_up_paths(WARM_UP_TENANT)
    for query, shapes in rec.shapes.items():
        assert shapes <= warm.shapes.get(query, set()), query
