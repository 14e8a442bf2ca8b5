"""Fixtures and helpers shared by the governance tests (imported by tests/test_governance_*.py)."""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import pytest

from graphmem.governance.service import Governance
from graphmem.models import EntityRef, EpisodeIn, FactIn

UTC = timezone.utc
T0 = datetime(2024, 5, 1, 9, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
def gov(db, settings, graph) -> Governance:
    """The governance service over the session's graph (no embedder)."""
    return Governance(db, settings, graph)


def uniq(prefix: str) -> str:
    return f"{prefix}{uuid.uuid4().hex[:10]}"


def episode(graph, tenant, text, *, user="u1", session="s1", minutes=0):
    """Append a message episode; returns its id."""
    ep, _ = graph.append_episode(tenant, EpisodeIn(content=text, occurred_at=T0 + timedelta(minutes=minutes),
                                                   session_id=session, user_id=user, role="user"))
    return ep.id


def person(name, **kw):
    return EntityRef(kind="Person", name=name, **kw)


def org(name, **kw):
    return EntityRef(kind="Organization", name=name, **kw)


def fact(graph, tenant, subject, predicate, ep, *, obj=None, value=None, days=0, **kw):
    """Assert one fact from episode `ep`, valid from T0 + `days`; returns the outcome."""
    return graph.assert_fact(tenant, FactIn(subject=subject, predicate=predicate, object=obj, value=value,
                                            episode_id=ep, valid_from=T0 + timedelta(days=days), **kw))


def raw(db, query, **params):
    """A raw test-only query (inspection of the stored graph)."""
    with db.driver.session(database=db.database) as s:
        return s.run(query, **params).data()


def fact_node(db, fact_id):
    rows = raw(db, "MATCH (f:Fact {id: $id}) RETURN f {.*, embedding: null} AS f", id=fact_id)
    return rows[0]["f"] if rows else None


def tenant_counts(db, tenant):
    """Nodes by label and relationships of one tenant (to show another tenant was not touched)."""
    nodes = raw(db, "MATCH (n {tenant_id: $t}) RETURN labels(n)[0] AS l, count(*) AS c ORDER BY l", t=tenant)
    rels = raw(db, "MATCH (n {tenant_id: $t})-[r]->() RETURN type(r) AS t, count(*) AS c ORDER BY t", t=tenant)
    props = raw(db, "MATCH (n {tenant_id: $t}) RETURN n.id AS id, n.retain_until AS r, n.valid_to AS v, "
                    "n.status AS s ORDER BY id", t=tenant)
    return nodes, rels, props
