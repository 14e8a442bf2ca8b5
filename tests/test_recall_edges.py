"""Edges of the recall API over real HTTP found by trying to break it as a new user: options that would do
nothing, and what the answers say about them."""
from __future__ import annotations

import uuid

import pytest

from tests.test_recall_service import build_crm


@pytest.fixture(scope="module")
def crm_api(graph):
    tenant = f"t-{uuid.uuid4().hex[:12]}"
    return tenant, build_crm(graph, tenant)


def test_fact_only_search_options_without_fact_targets_are_refused(client_for, crm_api):
    """`predicates` and `include_superseded` narrow or widen fact hits only: a search that does not target facts
    took them and answered as if they had been applied (a 200 ignoring them). Now a 422 naming the option, as for
    `mmr_lambda` without `mmr`."""
    tenant, _ = crm_api
    c = client_for(tenant, "analyst")
    for option in ({"predicates": ["WORKS_AT"]}, {"include_superseded": True}):
        for targets in (["episode"], ["entity"], ["episode", "entity"]):
            r = c.post("/v1/search", json={"query": "Dana Globex", "targets": targets, **option})
            assert r.status_code == 422, (option, targets, r.text)
            assert r.headers["content-type"].startswith("application/problem+json")
            field = next(iter(option))
            assert r.json()["field"] == field and r.json()["detail"].startswith(f"{field}:"), r.text
            assert "fact" in r.json()["detail"], r.text
        # with facts among the targets the option applies; its default or an empty list is no option at all
        r = c.post("/v1/search", json={"query": "Dana Globex", "targets": ["fact", "episode"], **option})
        assert r.status_code == 200, r.text
    for same_as_none in ({"predicates": []}, {"predicates": None}, {"include_superseded": False}):
        r = c.post("/v1/search", json={"query": "Dana Globex", "targets": ["episode"], **same_as_none})
        assert r.status_code == 200, (same_as_none, r.text)
