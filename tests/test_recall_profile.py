"""PROFILE the hot recall queries on a populated graph (several tenants): no plan may scan all nodes
(AllNodesScan) or a whole label (NodeByLabelScan); tenant-scoped starts must come from an index seek
(unique/range index on id or tenant_id, or a full-text/vector index procedure followed by the tenant filter)."""
from __future__ import annotations

import uuid

import pytest

import cypher
from graphmem.recall.lucene import build_query
from graphmem.timeutil import utcnow
from tests.test_recall_service import build_crm

BAD = ("AllNodesScan", "NodeByLabelScan", "NodeByLabelScanPartial", "AllNodesScanPartial")


def operators(plan) -> list[str]:
    """Operator types of a ResultSummary.profile tree, depth first."""
    out = [plan["operatorType"].split("@")[0]]
    for child in plan.get("children", []):
        out += operators(child)
    return out


@pytest.fixture(scope="module")
def populated(graph):
    tenants = [f"t-{uuid.uuid4().hex[:12]}" for _ in range(3)]
    data = [build_crm(graph, t) for t in tenants]
    return tenants[0], data[0]


def profile(db, name: str, **params) -> list[str]:
    with db.driver.session(database=db.database) as s:
        result = s.run("PROFILE " + cypher.query(name), params)
        result.consume()
        summary = result.consume()
    assert summary.profile, f"{name}: no profile returned"
    return operators(summary.profile)


def cases(tenant: str, ids: dict) -> dict[str, dict]:
    now = utcnow()
    common = {"tenant_id": tenant, "now": now, "as_of": now, "known_at": now}
    iso = {**common, "now": now.isoformat(), "as_of": now.isoformat(), "known_at": now.isoformat()}  # hot queries
    opt = {"session_id": None, "user_id": None, "occurred_after": None, "occurred_before": None,
           "lucene": build_query("who reports to Carol at Globex", tenant), "vector": [0.05] * 384,
           "entity_kinds": None, "predicates": None}
    retr = {"opt": opt, "limit": 50, "fetch": 1000, "seed_ids": [ids["Dana Smith"], ids["Globex"]], "weights": {},
            "rrf_k": 10, "prefetch": 20, "k": 10, "viewer": None}
    viewer = {"viewer": {"session_id": "s-1", "user_id": "u-1", "consent_classes": ["preference"],
                         "sensitive_classes": ["health", "finance", "legal"]}}
    rank_ids = {"fact_ids": [ids["Dana Smith"], ids["Globex"]], "episode_ids": [ids["Dana Smith"]],
                "entity_ids": [ids["Dana Smith"], ids["Globex"]]}
    return {
        "search/rank": {**iso, **retr, "targets": ["entity", "fact", "episode"], "include_superseded": False,
                        "scoped": True, "fact_ids": [], "episode_ids": [], "entity_ids": []},
        "search/rank (a window's viewer)": {**iso, **retr, **viewer, "targets": ["fact", "episode"],
                                            "include_superseded": False, "scoped": False,
                                            "fact_ids": [], "episode_ids": [], "entity_ids": []},
        "search/rank (ids only)": {**iso, **retr, "targets": [], "include_superseded": False,
                                   "scoped": False, **rank_ids},
        "search/entities_by_name": {"tenant_id": tenant, "opt": {"kind": "Person"}, "offset": 0, "limit": 10},
        "search/entities_by_text": {"tenant_id": tenant, "opt": {"lucene": build_query("Dana Globex", tenant),
                                                                 "kind": "Person"}, "offset": 0, "limit": 10,
                                    "fetch": 100},
        "recall/around": {**iso, "entity_id": ids["Sam Me"], "max_hops": 3, "limit": 50, "opt": {"predicates": None}},
        "recall/between": {**iso, "from_id": ids["Sam Me"], "to_id": ids["Initech"], "k": 5, "max_hops": 3,
                           "opt": {"predicates": None}},
        "recall/neighbours": {**common, "entity_id": ids["Dana Smith"], "direction": "both",
                              "opt": {"predicates": None}, "include_superseded": False, "offset": 0, "limit": 50},
        "recall/who_at": {"tenant_id": tenant, "now": now, "as_of": now, "known_at": now, "org_id": ids["Globex"],
                          "member_predicate": "WORKS_AT", "offset": 0, "limit": 50,
                          "opt": {"predicate": "REPORTS_TO", "value_key": None, "object_id": None,
                                  "via_predicate": "HAS_TITLE", "via_value_key": "cfo"}},
    }


@pytest.mark.parametrize("name", list(cases("t", {k: "x" for k in
                                                  ["Dana Smith", "Globex", "Sam Me", "Initech"]})))
def test_hot_query_plans_use_indexes(db, populated, name):
    tenant, ids = populated
    ops = profile(db, name.split(" (")[0], **cases(tenant, ids)[name])
    bad = [o for o in ops if o in BAD]
    assert not bad, f"{name} plan scans: {bad} in {ops}"
    assert any("Seek" in o or o == "ProcedureCall" for o in ops), f"{name}: no index seek in {ops}"


def test_profile_detects_a_label_scan(db, populated):
    """The check itself can fail: a tenant-only entity listing without kind IS NOT NULL would scan the label."""
    with db.driver.session(database=db.database) as s:
        result = s.run("PROFILE MATCH (n:Episode) WHERE n.content CONTAINS $x RETURN count(n)", x="zzz")
        summary = result.consume()
    assert "NodeByLabelScan" in operators(summary.profile)
