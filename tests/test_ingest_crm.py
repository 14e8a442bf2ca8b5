"""The default CRM mapping (graphmem/data/crm_mapping.json): a sequence of contact, account and deal record changes
becomes the right current facts and history, with no LLM."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from graphmem.ingest.worker import Worker
from graphmem.models import EpisodeIn

UTC = timezone.utc


def when(day: str) -> datetime:
    return datetime.fromisoformat(day + "T12:00:00+00:00")


def changes(services, tenant, records):
    eps = [EpisodeIn(kind="event" if i % 2 else "json", content=json.dumps(r), occurred_at=when(r["changed_at"][:10]),
                     idempotency_key=f"crm-{i}") for i, r in enumerate(records)]
    out = [e for e, _ in services.ingest.append_episodes(tenant, eps)]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    return out


def test_record_changes_make_current_facts_and_history(make_services, tenant):
    s = make_services()
    eps = changes(s, tenant, [
        {"object": "account", "id": "a-1", "name": "Initech", "domain": "initech.com", "changed_at": "2023-01-02"},
        {"object": "contact", "id": "c-1", "name": "Dana Reyes", "email": "dana@initech.com", "company": "Initech",
         "account_id": "a-1", "title": "Account Executive", "changed_at": "2023-01-05"},
        {"object": "deal", "id": "d-1", "name": "Initech renewal", "account": "Initech", "account_id": "a-1",
         "stage": "qualified", "amount": "120000", "currency": "EUR", "owner": "Dana Reyes",
         "owner_email": "dana@initech.com", "changed_at": "2023-02-01"},
        {"object": "deal", "id": "d-1", "name": "Initech renewal", "stage": "proposal", "changed_at": "2023-03-01"},
        {"object": "contact", "id": "c-1", "name": "Dana Reyes", "title": "Head of Sales", "changed_at": "2023-06-01"},
        {"object": "deal", "id": "d-1", "name": "Initech renewal", "stage": "closed_won", "amount": "135000",
         "currency": "EUR", "changed_at": "2023-04-15"},
        {"object": "contact", "id": "c-1", "name": "Dana R.", "company": "Globex", "changed_at": "2024-02-01"},
        # arrives late: an older title, stored as history, the current title stays current
        {"object": "contact", "id": "c-1", "name": "Dana Reyes", "title": "Sales Intern", "changed_at": "2022-06-01"},
    ])
    assert {s.ingest.job_status(tenant, e.id).status for e in eps} == {"done"}
    g = s.graph
    [dana] = g.find_entities(tenant, "Dana Reyes", "Person")
    assert "crm:c-1" in dana.external_ids and dana.email == "dana@initech.com"
    assert g.find_entities(tenant, "Dana R.", "Person")[0].id == dana.id      # same contact by external id

    now = {f.predicate: f for f in g.facts_about(tenant, dana.id) if f.subject_id == dana.id}
    assert now["HAS_TITLE"].value == "Head of Sales"
    globex = g.find_entities(tenant, "Globex", "Organization")[0]
    assert now["WORKS_AT"].object_id == globex.id and now["WORKS_AT"].valid_from == datetime(2024, 2, 1, tzinfo=UTC)
    assert all(f.source == "system" and f.confidence == 1.0 for f in now.values())

    titles = g.fact_history(tenant, now["HAS_TITLE"].id)
    assert [(f.value, f.valid_from.date().isoformat(), f.valid_to and f.valid_to.date().isoformat()) for f in titles] == [
        ("Sales Intern", "2022-06-01", "2023-01-05"), ("Account Executive", "2023-01-05", "2023-06-01"),
        ("Head of Sales", "2023-06-01", None)]
    jobs_ = g.fact_history(tenant, now["WORKS_AT"].id)
    assert [f.status for f in jobs_] == ["closed", "current"]
    initech = g.find_entities(tenant, "Initech", "Organization")
    assert len(initech) == 1 and jobs_[0].object_id == initech[0].id and initech[0].domain == "initech.com"

    as_of_2023 = {f.predicate: f for f in g.facts_about(tenant, dana.id, as_of=datetime(2023, 3, 1, tzinfo=UTC))
                  if f.subject_id == dana.id}
    assert as_of_2023["HAS_TITLE"].value == "Account Executive" and as_of_2023["WORKS_AT"].object_id == initech[0].id

    [deal] = g.find_entities(tenant, "Initech renewal", "Deal")
    d = {f.predicate: f for f in g.facts_about(tenant, deal.id) if f.subject_id == deal.id}
    assert d["DEAL_STAGE"].value == "closed_won" and d["DEAL_AMOUNT"].value == "135000 EUR"
    assert d["DEAL_WITH"].object_id == initech[0].id
    stages = [f.value for f in g.fact_history(tenant, d["DEAL_STAGE"].id)]
    assert stages == ["qualified", "proposal", "closed_won"]
    owns = [f for f in g.facts_about(tenant, dana.id, predicates=["OWNS_DEAL"])]
    assert [f.object_id for f in owns] == [deal.id]


def test_replayed_record_changes_add_nothing(make_services, tenant):
    s = make_services()
    rec = {"object": "contact", "id": "c-2", "name": "Ari Noor", "title": "CTO", "changed_at": "2023-01-01"}
    changes(s, tenant, [rec])
    [ari] = s.graph.find_entities(tenant, "Ari Noor")
    first = s.graph.facts_about(tenant, ari.id)
    ep, created = s.ingest.append_episodes(tenant, [EpisodeIn(kind="json", content=json.dumps(rec),
                                                              occurred_at=when("2023-01-01"),
                                                              idempotency_key="crm-0")])[0]
    assert not created                                          # same key: nothing new
    changes(s, tenant, [rec, rec])                              # the same change again under new keys
    again = s.graph.facts_about(tenant, ari.id)
    assert [f.id for f in again] == [f.id for f in first]       # no new fact, only provenance
    assert len(s.graph.fact_provenance(tenant, first[0].id)) == 2


def test_unmappable_json_fails_with_reason(make_services, tenant):
    s = make_services()
    bad = [EpisodeIn(kind="json", content="{not json", occurred_at=when("2023-01-01")),
           EpisodeIn(kind="json", content=json.dumps({"object": "invoice", "id": "i-1"}), occurred_at=when("2023-01-01")),
           EpisodeIn(kind="json", content=json.dumps({"object": "contact", "id": "c-3", "name": "Lee",
                                                      "changed_at": "yesterday-ish"}), occurred_at=when("2023-01-01"))]
    eps = [e for e, _ in s.ingest.append_episodes(tenant, bad)]
    Worker(s, tenants=[tenant]).run(until_idle=True)
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps]
    assert [j.status for j in jobs_] == ["failed"] * 3
    assert "not JSON" in jobs_[0].reason and "invoice" in jobs_[1].reason and "changed_at" in jobs_[2].reason
    assert jobs_[0].attempts == 1                               # permanent: not retried
