"""Governance and user-memory routes through the real HTTP server: forget, legal hold refusals as problem+json,
retention settings, the sweeper, audit, and a user listing, exporting, correcting, deleting and confirming or
rejecting their memories. Data is written through the ingest service."""
from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

from graphmem.models import EntityRef, EpisodeIn, FactIn

T0 = datetime(2024, 5, 1, 9, 0, tzinfo=timezone.utc)


def _episode(services, tenant, text, user="u1", session="s1"):
    return services.ingest.append_episodes(tenant, [EpisodeIn(content=text, occurred_at=T0, user_id=user,
                                                               session_id=session, role="user")])[0][0].id


def _fact(services, tenant, ep, predicate, value, subject="Dana", **kw):
    return services.ingest.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name=subject),
                                                        predicate=predicate, value=value, episode_id=ep, **kw)])[0]


def test_user_sees_corrects_and_deletes_memories(services, client_for, tenant):
    ep = _episode(services, tenant, "Dana prefers email; my api key is sk-abcdefghijklmnopqrstuvwx1234")
    pref = _fact(services, tenant, ep, "PREFERS_CHANNEL", "email").fact_id
    title = _fact(services, tenant, ep, "HAS_TITLE", "CFO").fact_id
    _episode(services, tenant, "someone else's chat", user="u2", session="s2")
    agent = client_for(tenant, "agent")

    page = agent.get("/v1/memories", params={"user_id": "u1", "limit": 1})
    assert page.status_code == 200 and page.json()["total"] == 2 and len(page.json()["items"]) == 1
    items = agent.get("/v1/memories", params={"user_id": "u1"}).json()["items"]
    by_id = {m["fact"]["id"]: m for m in items}
    assert set(by_id) == {pref, title}
    note = by_id[pref]["provenance"][0]
    assert note["episode_id"] == ep
    assert note["text"] == f"learned on 2024-05-01 from episode {ep}, source user_explicit, confidence 1"
    assert agent.get("/v1/memories", params={"user_id": "u2"}).json()["total"] == 0

    export = agent.get("/v1/memories/export", params={"user_id": "u1"}).json()
    assert [e["id"] for e in export["episodes"]] == [ep] and "sk-abcdef" not in str(export)
    assert {f["fact"]["id"] for f in export["facts"]} == {pref, title}
    assert [s["id"] for s in export["sessions"]] == ["s1"] and export["refusals"][0]["reason"] == "secret_redacted"
    # the user's refusals beside their candidates read as the tenant's list of refusals reads them
    held = agent.get("/v1/memories/candidates", params={"user_id": "u1"}).json()["refusals"]
    listed = agent.get("/v1/refusals").json()["items"]
    assert held and held == [r for r in listed if r["episode_id"] == ep]

    invisible = agent.patch(f"/v1/memories/{pref}", json={"user_id": "u1", "value": "\u200b"})
    assert invisible.status_code == 422 and invisible.json()["field"] == "value", invisible.text
    fixed = agent.patch(f"/v1/memories/{pref}", json={"user_id": "u1", "value": "phone"})
    assert fixed.status_code == 200 and fixed.json()["action"] == "corrected"
    new_id = fixed.json()["fact_id"]
    history = services.graph.fact_history(tenant, new_id)
    assert sorted((f.value, f.status) for f in history) == [("email", "corrected"), ("phone", "current")]
    assert services.graph.get_fact(tenant, new_id).source == "user_explicit"
    assert agent.get("/v1/memories", params={"user_id": "u1"}).json()["total"] == 3
    # the correction's record has nothing to extract: its job is not retried (it failed as "not JSON")
    record = [p.episode_id for p in services.graph.fact_provenance(tenant, new_id)][-1]
    assert agent.get(f"/v1/jobs/{record}").json()["reason"] == "explicit facts"
    assert agent.post(f"/v1/jobs/{record}/retry").status_code == 409
    # that record names the action and the fact id, not anything said: search never returns it
    hits = agent.post("/v1/search", json={"query": "User corrected memory phone", "targets": ["episode"]}).json()
    assert record not in {h["id"] for h in hits["hits"]}, hits

    other = agent.patch(f"/v1/memories/{pref}", json={"user_id": "u2", "value": "sms"})
    assert other.status_code == 404 and other.json()["field"] == "fact_id"
    bad = agent.patch(f"/v1/memories/{title}", json={"user_id": "u1"})
    assert bad.status_code == 422 and bad.json()["field"] == "value"

    gone = agent.delete(f"/v1/memories/{title}", params={"user_id": "u1"})
    assert gone.status_code == 200 and gone.json()["counts"]["facts"] == 1
    assert title not in {m["fact"]["id"] for m in agent.get("/v1/memories", params={"user_id": "u1"}).json()["items"]}


def test_candidates_confirm_and_reject(services, client_for, tenant):
    ep = _episode(services, tenant, "I think Dana has asthma and maybe diabetes")
    asthma = _fact(services, tenant, ep, "HAS_HEALTH_CONDITION", "asthma", source="inferred", confidence=0.9)
    diabetes = _fact(services, tenant, ep, "HAS_HEALTH_CONDITION", "diabetes", source="inferred", confidence=0.9)
    assert asthma.action == diabetes.action == "candidate"
    agent = client_for(tenant, "agent")

    listed = agent.get("/v1/memories/candidates", params={"user_id": "u1"}).json()
    assert {m["fact"]["id"] for m in listed["candidates"]["items"]} == {asthma.fact_id, diabetes.fact_id}
    assert agent.get("/v1/memories", params={"user_id": "u1"}).json()["total"] == 0

    ok = agent.post(f"/v1/memories/candidates/{asthma.fact_id}/confirm", json={"user_id": "u1"})
    assert ok.status_code == 200 and ok.json()["action"] == "created"
    confirmed = services.graph.get_fact(tenant, ok.json()["fact_id"])
    assert confirmed.source == "user_confirmed" and confirmed.status == "current" and confirmed.value == "asthma"
    assert ep in {p.episode_id for p in services.graph.fact_provenance(tenant, confirmed.id)}
    records = {p.episode_id for p in services.graph.fact_provenance(tenant, confirmed.id)} - {ep}
    hits = agent.post("/v1/search", json={"query": "User confirmed memory", "targets": ["episode"]}).json()
    assert len(records) == 1 and not records & {h["id"] for h in hits["hits"]}, hits
    no = agent.post(f"/v1/memories/candidates/{diabetes.fact_id}/reject", json={"user_id": "u1"})
    assert no.status_code == 200 and no.json()["action"] == "reject" and no.json()["counts"]["facts"] == 1
    assert agent.get("/v1/memories/candidates", params={"user_id": "u1"}).json()["candidates"]["total"] == 0
    again = agent.post(f"/v1/memories/candidates/{confirmed.id}/reject", json={"user_id": "u1"})
    assert again.status_code == 422 and again.json()["field"] == "fact_id"


def test_forget_hold_retention_sweep_and_audit_routes(services, client_for, tenant):
    ep = _episode(services, tenant, "Dana works on payroll", user="u9", session="s9")
    _fact(services, tenant, ep, "WORKING_ON", "payroll")
    agent, analyst, admin = client_for(tenant, "agent"), client_for(tenant, "analyst"), client_for("admin", "admin")

    assert analyst.post("/v1/forget", json={"user_id": "u9"}).status_code == 403
    two = agent.post("/v1/forget", json={"user_id": "u9", "session_id": "s9"})
    assert two.status_code == 422 and two.headers["content-type"] == "application/problem+json"
    assert two.json()["field"] == "user_id"

    for blank in ({"session_id": "s9", "reason": "\u200b"}, {"session_id": "\ufeff", "reason": "case 1"}):
        r = admin.post(f"/v1/admin/tenants/{tenant}/holds", json=blank)   # invisible text is no reason, no session
        assert r.status_code == 422 and r.json()["field"] in ("reason", "session_id"), r.text
    hold = admin.post(f"/v1/admin/tenants/{tenant}/holds", json={"session_id": "s9", "reason": "case 1"})
    assert hold.status_code == 201
    assert agent.post(f"/v1/admin/tenants/{tenant}/holds", json={"user_id": "u9", "reason": "x"}).status_code == 403
    refused = agent.post("/v1/forget", json={"user_id": "u9"})
    assert refused.status_code == 422 and refused.json()["title"] == "Refused"
    assert refused.json()["field"] == "user_id" and "legal hold" in refused.json()["detail"]
    assert [h["id"] for h in admin.get(f"/v1/admin/tenants/{tenant}/holds").json()["items"]] == [hold.json()["id"]]
    assert admin.delete(f"/v1/admin/tenants/{tenant}/holds/{hold.json()['id']}").status_code == 200

    done = agent.post("/v1/forget", json={"user_id": "u9"})
    assert done.status_code == 200 and done.json()["counts"]["episodes"] == 1 and done.json()["counts"]["facts"] == 1
    records = admin.get(f"/v1/admin/tenants/{tenant}/audit").json()["items"]
    assert [r["action"] for r in records if not r["action"].startswith("key_")] == ["forget", "release", "hold"]
    assert "u9" not in str(records) and "payroll" not in str(records) and "s9" not in str(records)

    assert agent.get(f"/v1/admin/tenants/{tenant}/retention").status_code == 403
    put = admin.put(f"/v1/admin/tenants/{tenant}/retention",
                    json={"episode_retention_days": 30, "fact_class_ttl_days": {"activity": 14}})
    assert put.status_code == 200 and put.json()["effective_fact_class_ttl_days"]["activity"] == 14
    got = admin.get(f"/v1/admin/tenants/{tenant}/retention").json()
    assert got["episode_retention_days"] == 30 and got["version"] == 1
    # the change is audited, with the days set and the admin key that set them
    last = admin.get(f"/v1/admin/tenants/{tenant}/audit").json()["items"][0]
    assert (last["action"], last["target_kind"], last["counts"]) == (
        "retention", "tenant", {"episode_retention_days": 30, "fact_class_ttl_days.activity": 14})
    assert last["actor"]
    bad = admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"fact_class_ttl_days": {"nope": 3}})
    assert bad.status_code == 422 and bad.json()["field"] == "fact_class_ttl_days.nope"
    # the message starts with the field it names, as every other field's message does (docs/http.md "Errors")
    assert bad.json()["detail"].startswith("fact_class_ttl_days.nope: unknown fact class 'nope'"), bad.text
    neg = admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"episode_retention_days": 0})
    assert neg.status_code == 422 and neg.json()["field"] == "episode_retention_days"
    for body, field in (({"episode_retention_days": "30"}, "episode_retention_days"),   # whole numbers only
                        ({"session_ttl_days": 7.5}, "session_ttl_days"),
                        ({"fact_class_ttl_days": {"employment": "14"}}, "fact_class_ttl_days.employment")):
        out = admin.put(f"/v1/admin/tenants/{tenant}/retention", json=body)
        assert out.status_code == 422 and out.json()["field"] == field, out.text
    for days in (0, -1, 36501):   # a TTL out of range names its class, as an unknown class does (was "body")
        out = admin.put(f"/v1/admin/tenants/{tenant}/retention",
                        json={"fact_class_ttl_days": {"preference": 30, "employment": days}})
        assert out.status_code == 422 and out.headers["content-type"] == "application/problem+json", out.text
        assert out.json()["field"] == "fact_class_ttl_days.employment", out.text
    assert admin.get(f"/v1/admin/tenants/{tenant}/retention").json() == got   # nothing stored

    # a tenant id no key can have (keys refuse it) gets no settings and no hold either: 422, nothing stored;
    # reading one is a 422 too, not an empty tenant's defaults
    for bad_tenant in (f" {tenant}", f"{tenant} ", "t" * 201, "%E2%80%8B", f"{tenant}%09"):
        for r in (admin.put(f"/v1/admin/tenants/{bad_tenant}/retention", json={"episode_retention_days": 30}),
                  admin.post(f"/v1/admin/tenants/{bad_tenant}/holds", json={"user_id": "u9", "reason": "case 7"}),
                  admin.post(f"/v1/admin/tenants/{bad_tenant}/keys", json={"role": "agent"}),
                  admin.get(f"/v1/admin/tenants/{bad_tenant}/retention"),
                  admin.get(f"/v1/admin/tenants/{bad_tenant}/holds"),
                  admin.get(f"/v1/admin/tenants/{bad_tenant}/keys"),
                  admin.get(f"/v1/admin/tenants/{bad_tenant}/audit")):
            assert r.status_code == 422 and r.headers["content-type"] == "application/problem+json", r.text
            assert r.json()["field"] == "tenant_id", r.text
    assert admin.get(f"/v1/admin/tenants/{tenant}/retention").json() == got         # a good id still reads

    assert admin.post("/v1/admin/sweep", json={}).json()["field"] == "tenant_id"
    for bad_tenant in (f" {tenant}", f"{tenant} ", "\u200b"):        # as the /tenants/{id} routes (helper-found)
        r = admin.post("/v1/admin/sweep", json={"tenant_id": bad_tenant})
        assert r.status_code == 422 and r.json()["field"] == "tenant_id", r.text
    swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant})
    assert swept.status_code == 200 and set(swept.json()["tenants"]) <= {tenant}
    assert agent.post("/v1/admin/sweep", json={"tenant_id": tenant}).status_code == 403


def test_receipts_and_their_openapi_examples_list_every_kind(services, client_for, tenant):
    """POST /v1/admin/sweep answers counts and totals by every kind the sweeper counts (only stamped_facts, 7,
    was listed), and the OpenAPI examples of the forget and sweep receipts list the very kinds the receipts do."""
    from graphmem.governance.models import ERASURE_KINDS, SWEEP_KINDS
    ep = _episode(services, tenant, "Dana works on payroll", user="u7", session="s7")
    _fact(services, tenant, ep, "WORKING_ON", "payroll")
    admin, agent = client_for("admin", "admin"), client_for(tenant, "agent")
    for _ in range(2):   # the second sweep has nothing to do: a receipt of zeros, not a missing tenant
        swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant})
        assert swept.status_code == 200, swept.text
        body = swept.json()
        assert list(body["tenants"][tenant]["counts"]) == sorted(SWEEP_KINDS) and list(body["totals"]) == sorted(SWEEP_KINDS)
    assert set(body["tenants"][tenant]["counts"].values()) == {0}
    forgot = agent.post("/v1/forget", json={"user_id": "u7"}).json()
    assert list(forgot["counts"]) == sorted(ERASURE_KINDS)

    paths = agent.get("/v1/openapi.json").json()["paths"]
    example = lambda path: paths[path]["post"]["responses"]["200"]["content"]["application/json"]["example"]  # noqa: E731
    assert list(example("/v1/forget")["counts"]) == list(forgot["counts"])
    sweep = example("/v1/admin/sweep")
    assert list(sweep["totals"]) == list(sweep["tenants"]["acme"]["counts"]) == sorted(SWEEP_KINDS)


def _http_episode(agent, text, user, session):
    """A user's episode written over HTTP; its id."""
    r = agent.post("/v1/episodes", json={"content": text, "occurred_at": T0.isoformat(), "user_id": user,
                                         "session_id": session, "role": "user"})
    assert r.status_code == 201, r.text
    return r.json()["episode"]["id"]


def _http_fact(agent, subject, ep, predicate, **kw):
    """One fact written over HTTP from episode `ep`; its id."""
    r = agent.post("/v1/facts", json={"facts": [{"subject": subject, "predicate": predicate, "episode_id": ep,
                                                  **kw}]})
    assert r.status_code == 200, r.text
    return r.json()["outcomes"][0]["fact_id"]


def test_forget_strips_what_only_the_erased_user_said_of_a_kept_contact(client_for, tenant):
    """A CRM episode creates contact Dana Reyes (external id email:dana@corp.com); another user's chat calls her DR
    and gives her personal mail. Forgetting that user keeps Dana (the CRM's fact still uses her) but strips the alias
    and the identifiers only the chat gave: her entity no longer has them and a search no longer finds her by them."""
    agent = client_for(tenant, "agent")
    episode = partial(_http_episode, agent)
    assert_fact = partial(_http_fact, agent)

    crm = episode("CRM: contact Dana Reyes, Acme", "crm", "crm-sync")
    chat = episode("Dana, aka DR, her personal mail is dana.home@gmail.com", "u5", "s5")
    works = assert_fact({"kind": "Person", "name": "Dana Reyes", "external_ids": ["email:dana@corp.com"]}, crm,
                        "WORKS_AT", object={"kind": "Organization", "name": "Acme"})
    assert_fact({"kind": "Person", "name": "Dana Reyes", "aliases": ["DR"], "email": "dana.home@gmail.com",
                 "external_ids": ["personal:dana.home@gmail.com"]}, chat, "HAS_TITLE", value="CFO")
    dana = agent.get(f"/v1/facts/{works}").json()["subject_id"]
    found = lambda q: [h["id"] for h in agent.post("/v1/search", json={"query": q, "targets": ["entity"]}).json()["hits"]]  # noqa: E731
    assert found("DR") == [dana]

    done = agent.post("/v1/forget", json={"user_id": "u5"})

    assert done.status_code == 200, done.text
    counts = done.json()["counts"]
    assert (counts["facts"], counts["entities"], counts["aliases"], counts["external_ids"]) == (1, 0, 1, 1)
    entity = agent.get(f"/v1/entities/{dana}").json()
    assert (entity["aliases"], entity["external_ids"], entity["email"]) == ([], ["email:dana@corp.com"], None)
    assert found("DR") == [] and found("Dana Reyes") == [dana]
    assert "dana.home" not in agent.post("/v1/search", json={"query": "dana.home"}).text
    assert [f["id"] for f in agent.get("/v1/facts", params={"entity_id": dana}).json()["items"]] == [works]


def test_forget_renames_a_contact_only_the_erased_user_named(client_for, tenant):
    """User u6's chat creates Dana as "Dee Dee Boss" (with her work mail); the CRM's episode sends contact "Dana
    Reyes" with that mail and says she works at Acme. Forgetting u6 renames her "Dana Reyes" (the receipt counts
    it), rewrites the CRM fact's generated statement, and a search for the nickname finds nothing."""
    agent = client_for(tenant, "agent")
    episode = partial(_http_episode, agent)
    assert_fact = partial(_http_fact, agent)

    chat = episode("my boss Dee Dee Boss is CFO", "u6", "s6")
    assert_fact({"kind": "Person", "name": "Dee Dee Boss", "email": "dana@corp.com"}, chat, "HAS_TITLE", value="CFO")
    crm = episode("CRM: contact Dana Reyes", "crm", "crm-sync")
    works = assert_fact({"kind": "Person", "name": "Dana Reyes", "email": "dana@corp.com"}, crm, "WORKS_AT",
                        object={"kind": "Organization", "name": "Acme"})
    assert agent.get(f"/v1/facts/{works}").json()["statement"] == "Dee Dee Boss works at Acme"

    done = agent.post("/v1/forget", json={"user_id": "u6"})

    assert done.status_code == 200, done.text
    assert done.json()["counts"]["entities_renamed"] == 1
    fact = agent.get(f"/v1/facts/{works}").json()
    assert fact["statement"] == "Dana Reyes works at Acme"
    entity = agent.get(f"/v1/entities/{fact['subject_id']}").json()
    assert (entity["name"], entity["aliases"]) == ("Dana Reyes", [])
    assert "Dee Dee" not in agent.post("/v1/search", json={"query": "Dee Dee Boss"}).text


def test_a_write_to_a_session_past_its_ttl_starts_it_afresh_instead_of_reviving_it(services, client_for, tenant):
    """Helper-found: a session idle past `session_ttl_days` kept its old turns and pins for ever once the agent
    wrote to it again before the sweep (a turn, a pin write or an episode bumped `last_active_at`, so the sweeper
    never selected it): the window showed the old pin and the user's export the old turns. A write to such a
    session now expires it first, with the sweeper's cascade."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    for sid in ("by-turn", "by-pin", "by-episode"):
        r = agent.post(f"/v1/sessions/{sid}/turns", json={
            "idempotency_key": f"{sid}-1", "user_id": "u1",
            "episodes": [{"role": "user", "content": "My flamingo lamp parcel never arrived",
                          "occurred_at": "2024-05-01T09:00:00Z"}],
            "pins": [{"key": "order_id", "value": {"type": "order_id", "value": "FLAMINGO-4471"}}]})
        assert r.status_code == 201, r.text
    with services.db.driver.session() as s:          # three days idle: past the TTL, not swept yet
        s.run("MATCH (x:Session {tenant_id: $t}) SET x.last_active_at = x.last_active_at - duration({days: 3})",
              t=tenant)

    r = agent.post("/v1/sessions/by-turn/turns", json={
        "idempotency_key": "by-turn-2", "user_id": "u1",
        "episodes": [{"role": "user", "content": "Hello again", "occurred_at": "2024-05-04T09:00:00Z"}]})
    assert r.status_code == 201, r.text
    r = agent.post("/v1/episodes", json={"content": "Hello again", "occurred_at": "2024-05-04T09:00:00Z",
                                         "user_id": "u1", "session_id": "by-episode", "role": "user"})
    assert r.status_code == 201, r.text

    window = agent.post("/v1/sessions/by-turn/context", json={"query": "flamingo parcel", "budget_tokens": 2000,
                                                               "model": "gpt-4", "system_policy": "Be brief."})
    assert window.status_code == 200 and "FLAMINGO" not in window.text and "flamingo" not in window.text
    r = agent.put("/v1/sessions/by-pin/pins/amount", json={"value": {"type": "amount", "value": "10.00"}})
    assert r.status_code == 404 and r.json()["field"] == "session_id"     # as after the sweep: the session is gone
    assert agent.get("/v1/sessions/by-pin/pins").status_code == 404
    for sid in ("by-turn", "by-episode"):
        pins = agent.get(f"/v1/sessions/{sid}/pins")
        assert pins.status_code == 200 and "order_id" not in {p["key"] for p in pins.json()["items"]}, pins.text
    export = agent.get("/v1/memories/export", params={"user_id": "u1"})
    assert export.status_code == 200 and "flamingo" not in export.text and "FLAMINGO" not in export.text
    assert export.text.count("Hello again") == 2
    # gone, not hidden: the expiry was the sweep's (audited as one), which finds nothing left to remove
    swept = admin.post("/v1/admin/sweep", json={"tenant_id": tenant}).json()["tenants"][tenant]["counts"]
    assert swept["sessions"] == 0 and swept["episodes"] == 0 and swept["pins"] == 0
    sweeps = [a for a in admin.get(f"/v1/admin/tenants/{tenant}/audit").json()["items"] if a["action"] == "sweep"]
    assert sorted(a["counts"]["sessions"] for a in sweeps) == [1, 1, 1]


def test_creating_a_session_past_its_ttl_starts_it_afresh(services, client_for, tenant):
    """Helper-found: POST /v1/sessions with the id of a session idle past `session_ttl_days`, not yet swept, answered
    200 "already existed" with the old session (another user: 409 "belongs to another user") although every read
    answers 404 for it, and left it so: GET right after the 200 was a 404. Creating it now expires it first, as
    the other writes do, and creates it afresh (201)."""
    agent, admin = client_for(tenant, "agent"), client_for("admin", "admin")
    assert admin.put(f"/v1/admin/tenants/{tenant}/retention", json={"session_ttl_days": 1}).status_code == 200
    for sid in ("same-user", "other-user"):
        r = agent.post(f"/v1/sessions/{sid}/turns", json={
            "idempotency_key": f"{sid}-1", "user_id": "u1",
            "episodes": [{"role": "user", "content": "My flamingo lamp parcel never arrived",
                          "occurred_at": "2024-05-01T09:00:00Z"}]})
        assert r.status_code == 201, r.text
    with services.db.driver.session() as s:          # three days idle: past the TTL, not swept yet
        s.run("MATCH (x:Session {tenant_id: $t}) SET x.last_active_at = x.last_active_at - duration({days: 3}), "
              "x.retain_until = x.retain_until - duration({days: 3})", t=tenant)

    for sid, user in (("same-user", "u1"), ("other-user", "u2")):
        r = agent.post("/v1/sessions", json={"id": sid, "user_id": user})
        assert r.status_code == 201 and r.json()["user_id"] == user, r.text
        got = agent.get(f"/v1/sessions/{sid}")
        assert got.status_code == 200 and got.json()["episodes"] == 0, got.text
    assert "flamingo" not in agent.get("/v1/memories/export", params={"user_id": "u1"}).text


INTERNAL = {"tenant_token", "search_terms", "processed_by", "embedding", "attrs", "value_type", "claim_token",
            "lease_until", "_lock"}


def _keys(v, found=None):
    found = set() if found is None else found
    if isinstance(v, dict):
        for k, x in v.items():
            found.add(k)
            _keys(x, found)
    elif isinstance(v, list):
        for x in v:
            _keys(x, found)
    return found


def test_an_export_carries_each_records_public_shape(services, client_for, tenant):
    """Helper-found: the export gave episodes and pins as stored nodes (`tenant_token`, `search_terms`,
    `processed_by`, `embedding: null`, a lock marker ...). Each record now has the shape its own GET answers with."""
    agent = client_for(tenant, "agent")
    turn = {"idempotency_key": "t-x", "user_id": "u1", "agent_version": "bot 1",
            "episodes": [{"content": "my order is A-77", "occurred_at": "2024-09-02T10:00:00Z"}],
            "pins": [{"key": "order_id", "value": {"type": "order_id", "value": "A-77"}},
                     {"key": "amount", "value": {"type": "amount", "value": "129.99"}}]}
    r = agent.post("/v1/sessions/s-x/turns", json=turn)
    assert r.status_code == 201, r.text
    [ep] = r.json()["episode_ids"]
    _fact(services, tenant, ep, "HAS_TITLE", "CFO")
    for i in range(3):
        more = {**turn, "idempotency_key": f"t-x{i}", "pins": [],
                "episodes": [{"content": f"and another thing number {i} " + "lorem ipsum dolor " * 200, "occurred_at": f"2024-09-02T10:0{i + 1}:00Z"}]}
        assert agent.post("/v1/sessions/s-x/turns", json=more).status_code == 201
    r = agent.post("/v1/sessions/s-x/compact", params={"force": "true"})
    assert r.status_code == 200 and r.json()["summary"] is not None, r.text
    export = agent.get("/v1/memories/export", params={"user_id": "u1"}).json()
    assert not (_keys(export) & INTERNAL), _keys(export) & INTERNAL
    listed = agent.get("/v1/sessions/s-x/summaries").json()["items"]
    assert len(export["summaries"]) == len(listed) == 1
    assert {k: v for k, v in export["summaries"][0].items() if listed[0][k] != v} == {}, listed
    assert len(export["episodes"]) == 4 and export["episodes"][0]["id"] == ep
    for episode in export["episodes"]:
        assert episode == agent.get(f"/v1/episodes/{episode['id']}").json()
    pins = {p["key"]: p for p in export["pins"]}
    assert set(pins) == {"order_id", "amount"}
    for key, pin in pins.items():
        assert pin == agent.get(f"/v1/sessions/s-x/pins/{key}").json(), key
    [session] = export["sessions"]
    whole = agent.get("/v1/sessions/s-x").json()
    assert session == {**whole, "pins": None, "episodes": None} or session == whole, (session, whole)
    assert len(export["facts"]) == 1 and export["facts"][0]["fact"]["value"] == "CFO"
