"""The Python client (sync and async) against the real server on loopback."""
from __future__ import annotations

import asyncio
import uuid
from datetime import datetime, timedelta, timezone

import httpx
import pytest

from graphmem.client import ApiError, AsyncClient, Client
from graphmem.models import EntityRef, Fact, FactIn

DANA = EntityRef(kind="Person", name="Dana Reyes", email="dana@reyes.io")
GLOBEX = EntityRef(kind="Organization", name="Globex", domain="globex.com")
INITECH = EntityRef(kind="Organization", name="Initech", domain="initech.com")


def _utc(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc)


def test_sync_client_facts_roundtrip(api_url, make_key, tenant):
    with Client(api_url, make_key(tenant)) as gm:
        first = gm.assert_facts([FactIn(subject=DANA, predicate="WORKS_AT", object=INITECH,
                                        valid_from=_utc("2019-03-04"))])
        second = gm.assert_facts([FactIn(subject=DANA, predicate="WORKS_AT", object=GLOBEX,
                                         valid_from=_utc("2021-06-14"))])
        assert second.outcomes[0].action == "superseded"
        fact = gm.get_fact(second.outcomes[0].fact_id)
        assert isinstance(fact, Fact) and fact.valid_from == _utc("2021-06-14")
        history = gm.fact_history(fact.id)
        assert [f.id for f in history.items] == [first.outcomes[0].fact_id, fact.id]
        assert gm.fact_provenance(fact.id).items[0].episode_id == second.episode_id
        past = gm.entity_facts(fact.subject_id, as_of=_utc("2020-01-01"), predicates=["WORKS_AT"])
        assert [f.id for f in past.items] == [first.outcomes[0].fact_id]
        fixed = gm.correct_fact(fact.id, object=EntityRef(kind="Organization", name="Hooli"))
        assert fixed.action == "corrected" and gm.get_fact(fixed.fact_id).statement.endswith("Hooli")
        gone = gm.retract_facts(fact.subject_id, "WORKS_AT")
        assert gone.fact_ids == [fixed.fact_id]
        assert "WORKS_AT" in [p.name for p in gm.predicates().items]
        assert gm.ready()["neo4j"] == "ok" and "graphmem_http_request_duration_seconds" in gm.metrics()


def test_errors_raise_with_the_problem(api_url, make_key, tenant):
    with Client(api_url, make_key(tenant)) as gm:
        missing = uuid.uuid4().hex
        with pytest.raises(ApiError) as err:
            gm.get_fact(missing)
        assert err.value.status == 404 and err.value.field == "fact_id" and missing in err.value.detail
        assert err.value.request_id and err.value.problem["instance"] == f"/v1/facts/{missing}"
        with pytest.raises(ApiError) as err:
            gm.assert_facts([{"subject": DANA.model_dump(), "predicate": "NO_SUCH_PREDICATE", "value": "x"}])
        assert err.value.status == 422 and err.value.field == "facts[0].predicate"
        with pytest.raises(ApiError) as err:
            gm.tenants()
        assert err.value.status == 403
    with Client(api_url, "gm_wrong") as gm, pytest.raises(ApiError) as err:
        gm.get_fact(missing)
    assert err.value.status == 401 and err.value.title == "Unauthorized"
    # keys the server would refuse, or that httpx cannot send, are named before any call (helper-found: an empty
    # key or idempotency key went out as none, a non-ASCII one failed inside httpx with UnicodeEncodeError)
    for bad in ("", "gm_caf\u00e9"):
        with pytest.raises(ValueError, match="api_key"):
            Client(api_url, bad)
    with Client(api_url, make_key(tenant)) as gm:
        for bad in ("", " ", "k\u00e9y", "k" * 201):
            with pytest.raises(ValueError, match="idempotency_key"):
                gm.assert_facts([{"subject": DANA.model_dump(), "predicate": "HAS_TITLE", "value": "x"}],
                                idempotency_key=bad)


def test_admin_key_management_through_the_client(api_url, make_key, tenant):
    with Client(api_url, make_key("admin", "admin")) as admin:
        created = admin.create_key(tenant, "analyst", "bi")
        assert created.key.role == "analyst" and created.secret.startswith("gm_")
        assert [k.id for k in admin.list_keys(tenant).items] == [created.key.id]
        rotated = admin.rotate_key(tenant, created.key.id)
        assert rotated.secret != created.secret
        assert admin.revoke_key(tenant, rotated.key.id).revoked_at is not None
        with pytest.raises(ApiError) as err:      # a revoked key stays revoked: no new secret for it
            admin.rotate_key(tenant, rotated.key.id)
        assert err.value.status == 409 and err.value.field == "key_id"
        assert [k.revoked_at is not None for k in admin.list_keys(tenant).items] == [True, True]
    with Client(api_url, rotated.secret) as gm, pytest.raises(ApiError) as err:
        gm.predicates()
    assert err.value.status == 401


def test_async_client(api_url, make_key, tenant):
    key = make_key(tenant)

    async def main():
        async with AsyncClient(api_url, key) as gm:
            outs = await asyncio.gather(*[
                gm.assert_facts([FactIn(subject=EntityRef(kind="Person", name=f"P{i}"), predicate="HAS_TITLE",
                                        value=f"Title {i}")]) for i in range(5)])
            facts = await asyncio.gather(*[gm.get_fact(o.outcomes[0].fact_id) for o in outs])
            with pytest.raises(ApiError) as err:
                await gm.get_fact("nope")
            return facts, err.value

    facts, err = asyncio.run(main())
    assert sorted(f.value for f in facts) == [f"Title {i}" for i in range(5)]
    assert err.status == 404


def test_turn_loop_and_other_areas_through_the_client(api_url, make_key, tenant):
    now = datetime.now(timezone.utc)
    with Client(api_url, make_key(tenant)) as gm:
        session = gm.create_session("u-1", session_id="tab-1")
        assert session.id == "tab-1"
        pin = gm.put_pin("tab-1", "order_id", {"type": "order_id", "value": "A-10293"})
        assert gm.get_pin("tab-1", "order_id").version == pin.version
        with pytest.raises(ApiError) as err:
            gm.put_pin("tab-1", "order_id", {"type": "order_id", "value": "A-1"}, version=pin.version + 5)
        assert err.value.status == 409
        turn = gm.append_turn("tab-1", {"idempotency_key": "t1", "user_id": "u-1", "episodes": [
            {"role": "user", "content": "Where is my refund for order A-10293?", "occurred_at": now.isoformat()}]})
        assert len(turn.episode_ids) == 1
        window = gm.load_context("tab-1", {"query": "refund", "budget_tokens": 1500,
                                           "system_policy": "You are Acme's support agent."})
        assert "A-10293" in window.text and window.total_tokens <= 1500
        assert [e.id for e in gm.session_episodes("tab-1").items] == turn.episode_ids
        assert gm.get_episode(turn.episode_ids[0]).content.startswith("Where is my refund")
        assert gm.job(turn.episode_ids[0]).episode_id == turn.episode_ids[0]
        out = gm.assert_facts([FactIn(subject=DANA, predicate="WORKS_AT", object=GLOBEX)])
        dana = gm.get_entity(gm.get_fact(out.outcomes[0].fact_id).subject_id)
        assert dana.name == "Dana Reyes" and dana.id in [e.id for e in gm.find_entities("Dana").items]
        hits = gm.search({"query": "Globex", "targets": ["fact"]}).hits
        assert hits and hits[0].id == out.outcomes[0].fact_id
        globex = gm.get_fact(out.outcomes[0].fact_id).object_id
        assert gm.paths(dana.id, globex).paths[0].length == 1
        assert gm.paths(dana.id, globex, known_at=now - timedelta(days=1)).paths == []   # not yet recorded then
        assert gm.paths(dana.id, globex, predicates=["knows"]).paths == []   # the one fact is WORKS_AT
        members = gm.who_at("Globex")
        assert members.org.id == globex and [m.entity.id for m in members.items] == [dana.id]
        assert gm.who_at(globex, known_at=now - timedelta(days=1)).items == []
        intro = gm.introduction("Dana Reyes", globex)
        assert [h.to_id for h in intro.path.hops] == [globex]
        assert gm.introduction(dana.id, "Globex", predicates=["KNOWS"]).path is None
        with pytest.raises(ApiError) as err:
            gm.who_at("Globex", member_predicate="HAS_TITLE")
        assert (err.value.status, err.value.field) == (422, "member_predicate")
        assert gm.neighbourhood(dana.id, known_at=now - timedelta(days=1)).items == []
        receipt = gm.forget(fact_id=out.outcomes[0].fact_id)
        assert receipt is not None
        with pytest.raises(ApiError) as err:
            gm.get_fact(out.outcomes[0].fact_id)
        assert err.value.status == 404


def test_sessions_pin_keys_memories_and_admin_governance_through_the_client(api_url, make_key, tenant):
    """The routes a helper found the client lacking: summaries and compaction, consent, pin keys, a user's memory
    candidates and corrections, and the admin governance routes (retention, holds, sweep, audit, tenants)."""
    now = datetime.now(timezone.utc)
    with Client(api_url, make_key(tenant)) as gm, Client(api_url, make_key("admin", "admin")) as admin:
        assert gm.health() == {"status": "ok"}
        gm.create_session("u-1", session_id="long")
        for i in range(12):
            gm.append_turn("long", {"idempotency_key": f"t{i}", "user_id": "u-1", "episodes": [
                {"role": "user", "content": f"Turn {i}: " + f"the invoice INV-{i} for the Globex renewal was sent "
                                            "twice, and the second charge has to be refunded to the card. " * 6,
                 "occurred_at": (now + timedelta(seconds=i)).isoformat()}]})
        done = gm.compact("long", force=True)
        assert done.summary is not None and done.compacted_episodes > 0
        assert [s.id for s in gm.summaries("long").items] == [done.summary.id]
        assert gm.rollback_summary("long").current is None
        assert gm.summaries("long").items[0].status == "rolled_back"

        assert gm.set_consent({"scope": "user", "user_id": "u-1", "share_preferences": True}).updated_at
        assert [(c.scope, c.share_preferences) for c in gm.consent("u-1")] == [("user", True)]

        gm.define_pin_key({"key": "tier", "type": "custom", "value_type": "string"})
        assert [d.key for d in gm.pin_keys().items] == ["tier"]
        # over HTTP the path names the key: the body may leave it out, and one that differs is a 422 naming it
        # (helper-found: `key` was required in the body too)
        headers = {"Authorization": f"Bearer {make_key(tenant)}"}
        r = httpx.put(f"{api_url}/v1/pin-keys/plan", json={"type": "custom", "value_type": "string"}, headers=headers)
        assert r.status_code == 200 and r.json()["key"] == "plan", r.text
        r = httpx.put(f"{api_url}/v1/pin-keys/plan", json={"key": "other", "type": "custom"}, headers=headers)
        assert r.status_code == 422 and r.json()["field"] == "key", r.text
        r = httpx.put(f"{api_url}/v1/pin-keys/Bad%20Key", json={"type": "custom"}, headers=headers)
        assert r.status_code == 422 and r.json()["field"] == "key", r.text
        assert [d.key for d in gm.pin_keys().items] == ["plan", "tier"]

        ep = gm.append_episode({"content": "Dana has asthma, I think", "user_id": "u-1", "role": "user",
                                "occurred_at": now.isoformat()}).episode.id
        cand = gm.assert_facts([FactIn(subject=DANA, predicate="HAS_HEALTH_CONDITION", value="asthma",
                                       source="inferred", confidence=0.9, episode_id=ep)]).outcomes[0]
        assert cand.action == "candidate"
        assert [m.fact.id for m in gm.memory_candidates("u-1").candidates.items] == [cand.fact_id]
        confirmed = gm.confirm_candidate("u-1", cand.fact_id)
        fixed = gm.correct_memory("u-1", confirmed.fact_id, value="hay fever")
        assert gm.get_fact(fixed.fact_id).value == "hay fever"
        assert gm.delete_memory("u-1", fixed.fact_id).counts["facts"] == 1

        view = admin.retention(tenant)
        changed = admin.set_retention(tenant, {"episode_retention_days": 30, "fact_class_ttl_days": {"activity": 7}})
        assert changed.version == view.version + 1 and changed.effective_fact_class_ttl_days["activity"] == 7
        kept = admin.set_retention(tenant, {"fact_class_ttl_days": {"activity": None}})   # null: no TTL (sent as null)
        assert kept.fact_class_ttl_days == {"activity": None} and kept.episode_retention_days is None
        hold = admin.place_hold(tenant, "case 7", user_id="u-1")
        assert [h.id for h in admin.holds(tenant).items] == [hold.id]
        with pytest.raises(ApiError) as err:
            gm.forget(user_id="u-1")
        assert err.value.status == 422 and err.value.title == "Refused"
        assert admin.release_hold(tenant, hold.id).id == hold.id and admin.holds(tenant).items == []
        assert admin.sweep(tenant).totals.get("episodes", 0) == 0 and gm.get_episode(ep).id == ep   # 30 days: fresh
        assert admin.audit(tenant).items
        listed, offset = [], 0
        while page := admin.tenants(offset=offset, limit=500).items:    # every page: other tests' tenants have keys
            listed += [t.tenant_id for t in page]
            offset += len(page)
        assert tenant in listed and listed == sorted(listed)
        assert len(admin.tenants(limit=1).items) == 1
