"""The default CRM mapping (graphmem/data/crm_mapping.json): a sequence of contact, account and deal record changes
becomes the right current facts and history, with no LLM."""
from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from graphmem.errors import NotFound
from graphmem.ingest.worker import Worker
from graphmem.models import EntityRef, EpisodeIn, FactIn
from tests.ingest_fixture import tenant_strings

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
    assert "crm:contact:c-1" in dana.external_ids and dana.email == "dana@initech.com"
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
    with pytest.raises(ValidationError):   # content that does not parse is refused at intake now
        EpisodeIn(kind="json", content="{not json", occurred_at=when("2023-01-01"))
    # ... one stored before that check still fails its job, permanently
    bad = [EpisodeIn.model_construct(kind="json", content="{not json", occurred_at=when("2023-01-01"),
                                     source="user_explicit"),
           EpisodeIn(kind="json", content=json.dumps({"object": "invoice", "id": "i-1"}), occurred_at=when("2023-01-01")),
           EpisodeIn(kind="json", content=json.dumps({"object": "contact", "id": "c-3", "name": "Lee",
                                                      "changed_at": "yesterday-ish"}), occurred_at=when("2023-01-01"))]
    eps = [e for e, _ in s.ingest.append_episodes(tenant, bad)]
    Worker(s, tenants=[tenant]).run(until_idle=True)
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps]
    assert [j.status for j in jobs_] == ["failed"] * 3
    assert "not JSON" in jobs_[0].reason and "invoice" in jobs_[1].reason and "changed_at" in jobs_[2].reason
    assert jobs_[0].attempts == 1                               # permanent: not retried


def test_a_contact_and_an_account_with_one_id_are_two_entities(make_services, tenant):
    """CRM ids are per record type: external ids carry the type, so account c1 is not merged into contact c1 (with
    `crm:<id>` for every type it was: the person gained the account's name as an alias and its city)."""
    s = make_services()
    eps = changes(s, tenant, [
        {"object": "contact", "id": "c1", "name": "Ann Smith", "city": "Oslo", "changed_at": "2023-01-01"},
        {"object": "account", "id": "c1", "name": "Cee One Inc", "city": "Paris", "changed_at": "2023-01-02"},
        {"object": "account", "id": "c1", "city": "Rome", "changed_at": "2023-02-01"},
    ])
    assert [s.ingest.job_status(tenant, e.id).status for e in eps] == ["done"] * 3
    [ann] = s.graph.find_entities(tenant, "Ann Smith", "Person")
    [acme] = s.graph.find_entities(tenant, "Cee One Inc", "Organization")
    assert ann.aliases == [] and ann.external_ids == ["crm:contact:c1"] and acme.external_ids == ["crm:account:c1"]
    assert [f.value for f in s.graph.facts_about(tenant, ann.id, predicates=["LOCATED_IN"])] == ["Oslo"]
    assert [f.value for f in s.graph.facts_about(tenant, acme.id, predicates=["LOCATED_IN"])] == ["Rome"]


def test_a_partial_update_names_its_record_by_id_alone(make_services, tenant):
    """CRM webhooks send what changed and the record's id: such a change updates the entity stored under that id;
    one for an id never stored fails its job (no entity can be made without a name) and writes nothing."""
    s = make_services()
    eps = changes(s, tenant, [
        {"object": "contact", "id": "c-7", "name": "Mo Diaz", "title": "Analyst", "changed_at": "2023-01-01"},
        {"object": "contact", "id": "c-7", "title": "CFO", "city": "Lisbon", "changed_at": "2023-05-01"},
        {"object": "contact", "id": "c-7", "title": None, "changed_at": "2023-09-01"},
        {"object": "contact", "id": "c-404", "title": "CEO", "changed_at": "2023-05-01"},
        {"object": "contact", "title": "CTO", "changed_at": "2023-05-01"},
    ])
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps]
    assert [j.status for j in jobs_] == ["done", "done", "done", "failed", "failed"], [j.reason for j in jobs_]
    assert "crm:contact:c-404" in jobs_[3].reason and "name" in jobs_[3].reason
    assert "{name}" in jobs_[4].reason and "crm:contact:{id}" in jobs_[4].reason
    [mo] = s.graph.find_entities(tenant, "Mo Diaz", "Person")
    titles = [(f.value, f.status) for f in s.graph.fact_history(
        tenant, next(f.id for f in s.graph.facts_about(tenant, mo.id, include_superseded=True)
                     if f.predicate == "HAS_TITLE"))]
    assert titles == [("Analyst", "closed"), ("CFO", "retracted")]
    assert [f.value for f in s.graph.facts_about(tenant, mo.id, predicates=["LOCATED_IN"])] == ["Lisbon"]
    every = {f.value for f in s.graph.facts_about(tenant, mo.id, include_superseded=True)}
    assert every == {"Analyst", "CFO", "Lisbon"}                 # the failed changes wrote nothing to Mo


def test_a_record_whose_name_has_no_letters_still_updates_its_entity(make_services, tenant):
    """A record's name field of symbols alone ("...", "❤️") cannot resolve anything, but the record's id does: the
    name is dropped and the change lands on the entity stored under that id (helper-found: the record was refused
    as invalid_name). Without an id or identifier such a name still refuses its facts."""
    s = make_services()
    eps = changes(s, tenant, [
        {"object": "contact", "id": "c-1", "name": "Dana Reyes", "title": "CEO", "changed_at": "2023-01-01"},
        {"object": "contact", "id": "c-1", "name": "...", "title": "CFO", "changed_at": "2023-05-01"},
        {"object": "account", "id": "a-1", "name": "\u2764\ufe0f", "domain": "heart.org",
         "changed_at": "2023-05-01"},
    ])
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps]
    assert [j.status for j in jobs_[:2]] == ["done", "done"], [j.reason for j in jobs_]
    [dana] = s.graph.find_entities(tenant, "Dana Reyes", "Person")
    assert [f.value for f in s.graph.facts_about(tenant, dana.id, predicates=["HAS_TITLE"])] == ["CFO"]
    assert dana.name == "Dana Reyes" and "..." not in dana.aliases
    # a new account named by symbols alone fails its job as a record without a name does (c-404 above)
    assert jobs_[2].status == "failed" and "a new entity needs a kind and a name" in jobs_[2].reason, jobs_[2]


# ---- a field set to null is a retraction -------------------------------------------------------------
def at(ts: str) -> datetime:
    return datetime.fromisoformat(ts)


def feed(services, tenant, records, prefix):
    """Each record as its own event episode, occurred_at = its changed_at; then run a worker until idle."""
    eps = [EpisodeIn(kind="event", content=json.dumps(r), occurred_at=at(r["changed_at"]),
                     idempotency_key=f"{prefix}-{i}") for i, r in enumerate(records)]
    out = [e for e, _ in services.ingest.append_episodes(tenant, eps)]
    Worker(services, tenants=[tenant]).run(until_idle=True)
    assert {services.ingest.job_status(tenant, e.id).status for e in out} == {"done"}
    return out


def titles_now(g, tenant, person_id, as_of=None):
    return [f.value for f in g.facts_about(tenant, person_id, as_of=as_of, predicates=["HAS_TITLE"])]


def test_null_field_retracts_then_a_new_value_starts_again(make_services, tenant):
    s, g = make_services(), make_services().graph
    t1, t2, t3, t4, t5 = ("2023-01-05T09:30:00+00:00", "2023-03-01T10:00:00+00:00", "2023-05-10T16:45:00+00:00",
                          "2023-06-01T08:00:00+00:00", "2023-09-01T08:00:00+00:00")
    feed(s, tenant, [
        {"object": "contact", "id": "c-1", "name": "Mia Wong", "title": "Engineer", "phone": "+44 20 1234",
         "changed_at": t1},
        {"object": "contact", "id": "c-1", "name": "Mia Wong", "title": "Senior Engineer", "changed_at": t2},
        {"object": "contact", "id": "c-1", "name": "Mia Wong", "title": None, "changed_at": t3},
        {"object": "contact", "id": "c-1", "name": "Mia Wong", "city": "Leeds", "changed_at": t4},  # no title key
    ], "null")
    [mia] = g.find_entities(tenant, "Mia Wong", "Person")
    assert titles_now(g, tenant, mia.id) == []                       # retracted: no current title
    assert titles_now(g, tenant, mia.id, as_of=at(t3) - (at(t3) - at(t2)) / 2) == ["Senior Engineer"]
    current = {f.predicate: f.value for f in g.facts_about(tenant, mia.id)}
    assert current == {"HAS_PHONE": "+44 20 1234", "LOCATED_IN": "Leeds"}   # absent fields changed nothing

    feed(s, tenant, [{"object": "contact", "id": "c-1", "name": "Mia Wong", "title": "Staff Engineer",
                      "changed_at": t5}], "again")
    [now] = g.facts_about(tenant, mia.id, predicates=["HAS_TITLE"])
    assert now.value == "Staff Engineer" and now.valid_from == at(t5) and now.status == "current"
    history = [(f.value, f.valid_from, f.valid_to, f.status) for f in g.fact_history(tenant, now.id)]
    assert history == [("Engineer", at(t1), at(t2), "closed"),
                       ("Senior Engineer", at(t2), at(t3), "retracted"),     # ends exactly at the null event
                       ("Staff Engineer", at(t5), None, "current")]
    assert titles_now(g, tenant, mia.id, as_of=at(t4)) == []                  # the gap stays a gap
    senior = next(f for f in g.fact_history(tenant, now.id) if f.value == "Senior Engineer")
    roles = sorted(p.role for p in g.fact_provenance(tenant, senior.id))
    assert roles == ["assertion", "retraction"] and senior.closed_at is not None


def test_null_for_a_field_never_set_or_already_cleared_is_a_no_op(make_services, tenant):
    s = make_services()
    eps = feed(s, tenant, [
        {"object": "contact", "id": "c-2", "name": "Noor Ali", "phone": None, "title": "CFO",
         "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "contact", "id": "c-2", "name": "Noor Ali", "title": None, "changed_at": "2023-02-01T00:00:00+00:00"},
        {"object": "contact", "id": "c-2", "name": "Noor Ali", "title": None, "changed_at": "2023-03-01T00:00:00+00:00"},
    ], "noop")
    [noor] = s.graph.find_entities(tenant, "Noor Ali", "Person")
    facts = s.graph.facts_about(tenant, noor.id, include_superseded=True)
    assert [(f.value, f.status, f.valid_to) for f in facts] == [("CFO", "retracted", at("2023-02-01T00:00:00+00:00"))]
    assert s.ingest.job_status(tenant, eps[2].id).status == "done"


def test_deal_owner_and_account_set_to_null(make_services, tenant):
    s = make_services()
    g = s.graph
    feed(s, tenant, [
        {"object": "deal", "id": "d-1", "name": "Umbrella expansion", "owner": "Dana Reyes", "owner_id": "u-1",
         "account": "Umbrella", "account_id": "a-9", "stage": "qualified", "amount": 50000, "currency": "USD",
         "changed_at": "2024-01-10T12:00:00+00:00"},
        {"object": "deal", "id": "d-1", "name": "Umbrella expansion", "owner": None, "account": None,
         "amount": None, "changed_at": "2024-02-10T12:00:00+00:00"},
    ], "deal")
    [deal] = g.find_entities(tenant, "Umbrella expansion", "Deal")
    [dana] = g.find_entities(tenant, "Dana Reyes", "Person")
    assert {f.predicate: f.value for f in g.facts_about(tenant, deal.id)} == {"DEAL_STAGE": "qualified"}
    closed = g.facts_about(tenant, deal.id, as_of=at("2024-01-20T00:00:00+00:00"))
    assert {f.predicate for f in closed} == {"OWNS_DEAL", "DEAL_WITH", "DEAL_STAGE", "DEAL_AMOUNT"}
    owns = [f for f in g.facts_about(tenant, dana.id, include_superseded=True) if f.predicate == "OWNS_DEAL"]
    assert [(f.object_id, f.status, f.valid_to) for f in owns] == [(deal.id, "retracted",
                                                                     at("2024-02-10T12:00:00+00:00"))]

    feed(s, tenant, [{"object": "deal", "id": "d-1", "name": "Umbrella expansion", "owner": "Ari Noor",
                      "owner_id": "u-2", "changed_at": "2024-03-01T12:00:00+00:00"}], "deal2")
    owners = [f.subject_id for f in g.facts_about(tenant, deal.id, predicates=["OWNS_DEAL"])]
    assert owners == [g.find_entities(tenant, "Ari Noor", "Person")[0].id]


def test_late_null_closes_the_value_valid_then_and_keeps_the_later_one(make_services, tenant):
    """Out of order: the null event (May) arrives after a later value (September) was recorded. The value that was
    current in May is closed at the null's time; the September value stays current."""
    s = make_services()
    g = s.graph
    may, sep = "2023-05-10T16:45:00+00:00", "2023-09-01T08:00:00+00:00"
    feed(s, tenant, [
        {"object": "contact", "id": "c-3", "name": "Lena Park", "title": "Analyst", "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "contact", "id": "c-3", "name": "Lena Park", "title": "Manager", "changed_at": sep},
    ], "late")
    feed(s, tenant, [{"object": "contact", "id": "c-3", "name": "Lena Park", "title": None, "changed_at": may}], "late-null")
    [lena] = g.find_entities(tenant, "Lena Park", "Person")
    assert titles_now(g, tenant, lena.id) == ["Manager"]
    assert titles_now(g, tenant, lena.id, as_of=at("2023-07-01T00:00:00+00:00")) == []
    assert titles_now(g, tenant, lena.id, as_of=at("2023-03-01T00:00:00+00:00")) == ["Analyst"]
    [now] = g.facts_about(tenant, lena.id, predicates=["HAS_TITLE"])
    assert [(f.value, f.valid_to, f.status) for f in g.fact_history(tenant, now.id)] == [
        ("Analyst", at(may), "retracted"), ("Manager", None, "current")]


def test_a_late_value_older_than_a_clear_ends_at_the_clear(make_services, tenant):
    """Out of order the other way (tester-found): the null of March arrives first, when the contact has no title to
    close, then the title of February. The late value ends at the clear (retracted), as it would have had the
    records arrived in order; a value from after the clear stays current, and an older one arriving after that
    still ends at the clear, not at the newer value. Before, the clear left nothing behind and CTO stayed current."""
    s = make_services()
    g = s.graph
    jan, feb, feb15, mar, apr = ("2024-01-02T00:00:00+00:00", "2024-02-01T00:00:00+00:00",
                                 "2024-02-15T00:00:00+00:00", "2024-03-01T00:00:00+00:00", "2024-04-01T00:00:00+00:00")
    contact = {"object": "contact", "id": "c-9", "name": "Rui Costa"}
    feed(s, tenant, [{**contact, "changed_at": jan}], "clear-new")
    feed(s, tenant, [{**contact, "title": None, "changed_at": mar}], "clear-null")
    late = feed(s, tenant, [{**contact, "title": "CTO", "changed_at": feb}], "clear-late")
    [rui] = g.find_entities(tenant, "Rui Costa", "Person")
    assert titles_now(g, tenant, rui.id) == []                                  # cleared in March
    assert titles_now(g, tenant, rui.id, as_of=at(feb15)) == ["CTO"]
    assert [(f.value, f.valid_from, f.valid_to, f.status) for f in
            g.facts_about(tenant, rui.id, include_superseded=True, predicates=["HAS_TITLE"])] == [
        ("CTO", at(feb), at(mar), "retracted")]
    assert s.ingest.job_status(tenant, late[0].id).facts_asserted == 1

    feed(s, tenant, [{**contact, "title": "CEO", "changed_at": apr}], "clear-after")
    feed(s, tenant, [{**contact, "title": "VP", "changed_at": feb15}], "clear-later")
    assert titles_now(g, tenant, rui.id) == ["CEO"]
    assert [(f.value, f.valid_from, f.valid_to, f.status) for f in
            g.facts_about(tenant, rui.id, include_superseded=True, predicates=["HAS_TITLE"])] == [
        ("CTO", at(feb), at(feb15), "closed"), ("VP", at(feb15), at(mar), "retracted"),
        ("CEO", at(apr), None, "current")]

    # at-least-once delivery: the clear and the late value again change nothing
    feed(s, tenant, [{**contact, "title": None, "changed_at": mar}, {**contact, "title": "CTO", "changed_at": feb}],
         "clear-replay")
    assert len(g.facts_about(tenant, rui.id, include_superseded=True, predicates=["HAS_TITLE"])) == 3
    assert titles_now(g, tenant, rui.id) == ["CEO"]


def test_erasing_the_episode_of_a_clear_leaves_no_trace_of_it(make_services, tenant):
    """The clear is kept with its episode: once that episode is erased, a late older value is no longer ended by it
    (it stays current, as had the clear never been sent) and nothing in the graph names the clear's time."""
    s = make_services()
    g = s.graph
    feb, mar = "2024-02-01T00:00:00+00:00", "2024-03-01T00:00:00+00:00"
    contact = {"object": "contact", "id": "c-10", "name": "Ines Moreau"}
    feed(s, tenant, [{**contact, "changed_at": "2024-01-02T00:00:00+00:00"}], "erase-new")
    [clear] = feed(s, tenant, [{**contact, "phone": None, "changed_at": mar}], "erase-null")
    s.governance.forget(tenant, episode_id=clear.id)
    feed(s, tenant, [{**contact, "phone": "+33 1 2345", "changed_at": feb}], "erase-late")
    [ines] = g.find_entities(tenant, "Ines Moreau", "Person")
    assert [(f.value, f.valid_to, f.status) for f in g.facts_about(tenant, ines.id, predicates=["HAS_PHONE"])] == [
        ("+33 1 2345", None, "current")]
    assert not [x for x in tenant_strings(s.db, tenant) if "2024-03-01" in x]


def test_a_late_owner_before_a_cleared_owner_with_nothing_to_close_ends_at_the_null(make_services, tenant):
    """The object side of the same gap: the deal's owner is cleared in March while it has none, then the owner of
    February arrives. That owner ends at the clear; the deal has no owner now."""
    s = make_services()
    g = s.graph
    feed(s, tenant, [deal_rec(None, T1, stage="qualified"), {**deal_rec(None, T3), "owner": None}], "own-null")
    feed(s, tenant, [deal_rec("Bob Stone", T2)], "own-null-late")
    assert owners_at(g, tenant, "Deal d-7") == []
    assert ownership(g, tenant, "Deal d-7") == [("Bob Stone", at(T2), at(T3), "closed")]


def test_null_and_value_in_one_episode_apply_in_record_order(make_services, tenant):
    s = make_services()
    ep, _ = s.ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=at("2023-04-01T00:00:00+00:00"),
                                                        content=json.dumps([
        {"object": "contact", "id": "c-4", "name": "Ola Berg", "title": "VP", "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "contact", "id": "c-4", "name": "Ola Berg", "title": None, "changed_at": "2023-02-01T00:00:00+00:00"},
        {"object": "contact", "id": "c-4", "name": "Ola Berg", "title": "CEO", "changed_at": "2023-03-01T00:00:00+00:00"},
    ]))])[0]
    Worker(s, tenants=[tenant]).run(until_idle=True)
    assert s.ingest.job_status(tenant, ep.id).status == "done"
    [ola] = s.graph.find_entities(tenant, "Ola Berg", "Person")
    [now] = s.graph.facts_about(tenant, ola.id, predicates=["HAS_TITLE"])
    assert [(f.value, f.valid_to, f.status) for f in s.graph.fact_history(tenant, now.id)] == [
        ("VP", at("2023-02-01T00:00:00+00:00"), "retracted"), ("CEO", None, "current")]


# ---- a deal has one owner: a new owner closes the previous owner's OWNS_DEAL -------------------------
def deal_rec(owner: str | None, ts: str, deal: str = "d-7", **extra) -> dict:
    rec = {"object": "deal", "id": deal, "name": f"Deal {deal}", "changed_at": ts, **extra}
    if owner is not None:
        rec.update(owner=owner, owner_id=f"u-{owner.split()[0].lower()}")
    return rec


def ownership(g, tenant, deal_name: str) -> list[tuple[str, datetime, datetime | None, str]]:
    """Every OWNS_DEAL fact on the deal ever recorded: (owner name, valid_from, valid_to, status), oldest first."""
    [deal] = g.find_entities(tenant, deal_name, "Deal")
    names = {}
    out = []
    for f in g.facts_about(tenant, deal.id, include_superseded=True, predicates=["OWNS_DEAL"]):
        if f.subject_id not in names:
            names[f.subject_id] = g.get_entity(tenant, f.subject_id).name
        out.append((names[f.subject_id], f.valid_from, f.valid_to, f.status))
    return sorted(out, key=lambda t: (t[1], t[0]))


def owners_at(g, tenant, deal_name: str, as_of: str | None = None) -> list[str]:
    [deal] = g.find_entities(tenant, deal_name, "Deal")
    facts = g.facts_about(tenant, deal.id, as_of=at(as_of) if as_of else None, predicates=["OWNS_DEAL"])
    return sorted(g.get_entity(tenant, f.subject_id).name for f in facts)


T1, T2, T3 = "2024-01-10T12:00:00+00:00", "2024-02-10T12:00:00+00:00", "2024-03-10T12:00:00+00:00"


def test_new_owner_closes_the_previous_owner_at_the_change(make_services, tenant):
    s = make_services()
    g = s.graph
    eps = feed(s, tenant, [deal_rec("Dana Reyes", T1, stage="qualified"),
                           deal_rec("Dana Reyes", T1, deal="d-8"),          # Dana's other deal
                           deal_rec("Bob Stone", T2)], "own")
    assert owners_at(g, tenant, "Deal d-7") == ["Bob Stone"]
    assert owners_at(g, tenant, "Deal d-7", "2024-02-01T00:00:00+00:00") == ["Dana Reyes"]
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                ("Bob Stone", at(T2), None, "current")]
    assert owners_at(g, tenant, "Deal d-8") == ["Dana Reyes"]              # only the changed deal is touched
    [dana] = g.find_entities(tenant, "Dana Reyes", "Person")
    assert [f.object_id for f in g.facts_about(tenant, dana.id, predicates=["OWNS_DEAL"])] == \
        [g.find_entities(tenant, "Deal d-8", "Deal")[0].id]
    closed = next(f for f in g.facts_about(tenant, dana.id, include_superseded=True, predicates=["OWNS_DEAL"])
                  if f.status == "retracted")
    prov = {p.episode_id: p.role for p in g.fact_provenance(tenant, closed.id)}
    assert prov == {eps[0].id: "assertion", eps[2].id: "retraction"}       # the owner change is on record
    job = s.ingest.job_status(tenant, eps[2].id)
    assert job.facts_asserted == 1 and job.facts_retracted == 1
    assert g.facts_about(tenant, g.find_entities(tenant, "Deal d-7", "Deal")[0].id,
                         predicates=["DEAL_STAGE"])[0].value == "qualified"   # other fields untouched

    # back to Dana later: a new interval for her, Bob's closes
    feed(s, tenant, [deal_rec("Dana Reyes", T3)], "own-back")
    assert owners_at(g, tenant, "Deal d-7") == ["Dana Reyes"]
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                ("Bob Stone", at(T2), at(T3), "retracted"),
                                                ("Dana Reyes", at(T3), None, "current")]


def test_owner_changes_replayed_or_retried_change_nothing(make_services, tenant):
    s = make_services()
    g = s.graph
    records = [deal_rec("Dana Reyes", T1), deal_rec("Bob Stone", T2), deal_rec("Cleo Park", T3)]
    feed(s, tenant, records, "replay-a")
    first = ownership(g, tenant, "Deal d-7")
    [deal] = g.find_entities(tenant, "Deal d-7", "Deal")
    ids = sorted(f.id for f in g.facts_about(tenant, deal.id, include_superseded=True, predicates=["OWNS_DEAL"]))
    feed(s, tenant, records, "replay-b")                        # every change delivered again (at-least-once)
    eps = feed(s, tenant, list(reversed(records)), "replay-c")  # and again, newest first
    assert ownership(g, tenant, "Deal d-7") == first == [
        ("Dana Reyes", at(T1), at(T2), "retracted"), ("Bob Stone", at(T2), at(T3), "retracted"),
        ("Cleo Park", at(T3), None, "current")]
    assert sorted(f.id for f in g.facts_about(tenant, deal.id, include_superseded=True,
                                              predicates=["OWNS_DEAL"])) == ids
    assert {s.ingest.job_status(tenant, e.id).facts_retracted for e in eps} == {0}


def test_an_older_owner_change_arriving_late_is_history(make_services, tenant):
    s = make_services()
    g = s.graph
    feed(s, tenant, [deal_rec("Dana Reyes", T1), deal_rec("Cleo Park", T3)], "late")
    feed(s, tenant, [deal_rec("Bob Stone", T2)], "late-bob")     # Dana -> Bob happened before Bob -> Cleo
    assert owners_at(g, tenant, "Deal d-7") == ["Cleo Park"]       # the newer owner is not closed
    assert owners_at(g, tenant, "Deal d-7", "2024-03-01T00:00:00+00:00") == ["Bob Stone"]
    assert owners_at(g, tenant, "Deal d-7", "2024-02-01T00:00:00+00:00") == ["Dana Reyes"]
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                ("Bob Stone", at(T2), at(T3), "closed"),
                                                ("Cleo Park", at(T3), None, "current")]


def test_a_late_change_to_the_owner_a_later_snapshot_already_named(make_services, tenant):
    """CRM events often carry the whole record: the stage change of March names Bob as owner, and arrives before
    February's owner change to Bob. Bob is the one current owner; his February interval is history."""
    s = make_services()
    g = s.graph
    feed(s, tenant, [deal_rec("Dana Reyes", T1), deal_rec("Bob Stone", T3, stage="proposal")], "snap")
    feed(s, tenant, [deal_rec("Bob Stone", T2)], "snap-late")
    assert owners_at(g, tenant, "Deal d-7") == ["Bob Stone"]
    assert owners_at(g, tenant, "Deal d-7", "2024-03-01T00:00:00+00:00") == ["Bob Stone"]
    assert owners_at(g, tenant, "Deal d-7", "2024-02-01T00:00:00+00:00") == ["Dana Reyes"]
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                ("Bob Stone", at(T2), at(T3), "closed"),
                                                ("Bob Stone", at(T3), None, "current")]


def test_a_late_owner_change_before_a_cleared_owner_ends_at_the_null(make_services, tenant):
    s = make_services()
    g = s.graph
    feed(s, tenant, [deal_rec("Dana Reyes", T1), {**deal_rec(None, T3), "owner": None}], "null")
    feed(s, tenant, [deal_rec("Bob Stone", T2)], "null-late")
    assert owners_at(g, tenant, "Deal d-7") == []                  # the owner was cleared in March
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                ("Bob Stone", at(T2), at(T3), "closed")]


def test_owner_changes_within_one_episode_apply_in_record_order(make_services, tenant):
    s = make_services()
    ep, _ = s.ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=at(T3), content=json.dumps([
        deal_rec("Dana Reyes", T1, amount=100, currency="EUR"), deal_rec("Bob Stone", T2, amount=None),
        deal_rec("Cleo Park", T3)]))])[0]
    Worker(s, tenants=[tenant]).run(until_idle=True)
    job = s.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and job.facts_retracted == 3        # Dana, the amount, Bob
    assert ownership(s.graph, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                                      ("Bob Stone", at(T2), at(T3), "retracted"),
                                                      ("Cleo Park", at(T3), None, "current")]


def test_a_refused_new_owner_displaces_nobody(make_services, tenant):
    s = make_services()
    feed(s, tenant, [deal_rec("Dana Reyes", T1)], "refused")
    secret = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    eps = feed(s, tenant, [{**deal_rec(None, T2), "owner": secret}], "refused-2")
    job = s.ingest.job_status(tenant, eps[0].id)
    assert job.facts_refused == 1 and job.facts_retracted == 0
    assert owners_at(s.graph, tenant, "Deal d-7") == ["Dana Reyes"]


def test_a_related_record_named_by_id_alone(make_services, tenant):
    """CRM webhooks name related records by id: `owner_id` without `owner`, `account_id` without `company`. Each
    is the entity stored under that id (a new owner displaces the old one as a named one does); an id no entity
    has costs that fact alone (`unknown_entity`), and the record's other facts are stored."""
    s = make_services(bulk_batch_size=1)     # a refusal names its fact by its place in the job, not in its chunk
    g = s.graph
    feed(s, tenant, [{"object": "account", "id": "a-1", "name": "Initech", "changed_at": T1},
                     deal_rec("Dana Reyes", T1), deal_rec("Bob Stone", T1, deal="d-8")], "ids")
    eps = feed(s, tenant, [
        {"object": "deal", "id": "d-7", "owner_id": "u-bob", "account_id": "a-1", "changed_at": T2},
        {"object": "contact", "id": "c-3", "name": "Mo Diaz", "account_id": "a-1", "changed_at": T2},
        {"object": "deal", "id": "d-7", "owner_id": "u-nobody", "stage": "won", "changed_at": T3},
        {"object": "contact", "id": "c-3", "manager_id": "c-404", "title": "CFO", "changed_at": T3},
    ], "ids-2")
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps]
    assert [(j.facts_asserted, j.facts_refused) for j in jobs_] == [(2, 0), (1, 0), (1, 1), (1, 1)], jobs_
    assert ownership(g, tenant, "Deal d-7") == [("Dana Reyes", at(T1), at(T2), "retracted"),
                                               ("Bob Stone", at(T2), None, "current")]
    [initech] = g.find_entities(tenant, "Initech", "Organization")
    [deal] = g.find_entities(tenant, "Deal d-7", "Deal")
    [mo] = g.find_entities(tenant, "Mo Diaz", "Person")
    assert [f.object_id for f in g.facts_about(tenant, deal.id, predicates=["DEAL_WITH"])] == [initech.id]
    assert {f.predicate: f.object_id or f.value for f in g.facts_about(tenant, mo.id)} == {
        "WORKS_AT": initech.id, "HAS_TITLE": "CFO"}
    assert [f.value for f in g.facts_about(tenant, deal.id, predicates=["DEAL_STAGE"])] == ["won"]
    refused = sorted((r.reason, r.field, r.episode_id, r.predicate) for r in s.ingest.list_refusals(tenant))
    assert refused == sorted([("unknown_entity", "extraction.facts[1].subject", eps[2].id, "OWNS_DEAL"),
                              ("unknown_entity", "extraction.facts[1].object", eps[3].id, "REPORTS_TO")]), refused
    assert [e.name for e in g.find_entities(tenant, "Deal d-7", "Deal")] == ["Deal d-7"]


def test_exclusive_needs_object_self_and_a_subject_template(tmp_path):
    import pytest
    from pydantic import ValidationError

    from graphmem.ingest.mapping import Mapping
    bad = {"name": "bad", "version": 1, "objects": {"deal": {"entity": {"kind": "Deal", "name": "{name}"}, "facts": [
        {"predicate": "DEAL_STAGE", "value": "{stage}", "exclusive": True}]}}}
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    with pytest.raises(ValidationError, match=r"objects\.deal\.facts\[0\] \(DEAL_STAGE\).*exclusive"):
        Mapping.load(tmp_path / "bad.json")


@pytest.mark.parametrize("manager", [
    {"manager": "Pat Smith", "manager_id": "c-1"},                       # the contact's own external id
    {"manager": "Pat Smith", "manager_email": "pat@acme.com"},           # the contact's own email
    {"manager": "patricia  SMITH"},                                      # the contact's own name
], ids=["external_id", "email", "name"])
def test_a_contact_managed_by_itself_costs_that_fact_only(make_services, tenant, manager):
    """A record whose manager resolves to the contact itself (by external id, email or name, though the mapped
    names differ) has that REPORTS_TO refused as self_reference, recorded like any refusal; the record's other
    facts are stored and the job is done."""
    s = make_services()
    [ep] = changes(s, tenant, [{"object": "contact", "id": "c-1", "name": "Patricia Smith", "email": "pat@acme.com",
                                "company": "Acme", "title": "CEO", "changed_at": "2024-01-02", **manager}])
    job = s.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (2, 1), job
    [pat] = s.graph.find_entities(tenant, "Patricia Smith", "Person")
    now = {f.predicate: f for f in s.graph.facts_about(tenant, pat.id)}
    assert set(now) == {"WORKS_AT", "HAS_TITLE"} and now["HAS_TITLE"].value == "CEO"
    assert now["WORKS_AT"].object_id == s.graph.find_entities(tenant, "Acme", "Organization")[0].id
    refused = [(r.reason, r.field, r.episode_id, r.predicate) for r in s.ingest.list_refusals(tenant)]
    assert refused == [("self_reference", "extraction.facts[2].object", ep.id, "REPORTS_TO")], refused


def test_a_namesake_manager_with_another_email_is_not_a_self_reference(make_services, tenant):
    """Same kind and name, but the manager's email says somebody else: two people, and the fact is stored."""
    s = make_services()
    [ep] = changes(s, tenant, [{"object": "contact", "id": "c-1", "name": "Pat Smith", "email": "pat@acme.com",
                                "manager": "Pat Smith", "manager_email": "pat.senior@acme.com",
                                "changed_at": "2024-01-02"}])
    job = s.ingest.job_status(tenant, ep.id)
    assert job.status == "done" and (job.facts_asserted, job.facts_refused) == (1, 0), job
    pats = {e.email: e for e in s.graph.find_entities(tenant, "Pat Smith", "Person")}
    [boss] = [f for f in s.graph.facts_about(tenant, pats["pat@acme.com"].id) if f.predicate == "REPORTS_TO"]
    assert boss.object_id == pats["pat.senior@acme.com"].id


def test_a_new_contact_named_as_two_namesakes_is_a_third_person(make_services, tenant):
    """Helper-found: with two people named Jo Twin (HubSpot records 1 and 2), the CRM record of a new contact c-3
    named Jo Twin was merged into the first, and its dated title stored as that one's history. Its id names
    neither of them: it is a third person."""
    from graphmem.models import EntityRef, FactIn

    s = make_services()
    ep, _ = s.graph.append_episode(tenant, EpisodeIn(content="two Jo Twins", occurred_at="2024-01-01T00:00:00Z"))
    for n, title in ((1, "One"), (2, "Two")):
        s.graph.assert_facts(tenant, [FactIn(subject=EntityRef(kind="Person", name="Jo Twin",
                                                               external_ids=[f"hubspot:{n}"]),
                                             predicate="HAS_TITLE", value=title, episode_id=ep.id)])
    [rec] = changes(s, tenant, [{"object": "contact", "id": "c-3", "name": "Jo Twin", "title": "Three",
                                 "changed_at": "2024-01-03"}])
    assert s.ingest.job_status(tenant, rec.id).status == "done"
    jos = s.graph.find_entities(tenant, "Jo Twin", "Person")
    titles = {tuple(j.external_ids): [f.value for f in s.graph.facts_about(tenant, j.id, include_superseded=True)
                                      if f.predicate == "HAS_TITLE"] for j in jos}
    assert titles == {("hubspot:1",): ["One"], ("hubspot:2",): ["Two"], ("crm:contact:c-3",): ["Three"]}, titles


def test_the_change_mentions_its_record_entity_even_without_a_fact(make_services, tenant):
    """A contact record with nothing but its name makes no fact, yet its episode mentions the contact: a search
    seeded with the contact finds that change (graph proximity), as it finds the change that gave her a title."""
    from graphmem.recall.models import SearchRequest

    s = make_services()
    bare, titled = changes(s, tenant, [
        {"object": "contact", "id": "c-9", "name": "Uma Quist", "changed_at": "2023-01-05"},
        {"object": "contact", "id": "c-9", "name": "Uma Quist", "title": "Buyer", "changed_at": "2023-02-05"}])
    assert {s.ingest.job_status(tenant, e.id).status for e in (bare, titled)} == {"done"}
    [uma] = s.graph.find_entities(tenant, "Uma Quist", "Person")
    res = s.recall.search(tenant, SearchRequest(query="zzzz", targets=["episode"], seed_entity_ids=[uma.id]))
    assert {h.id for h in res.hits} == {bare.id, titled.id}


def test_a_field_of_invisible_characters_is_missing_not_a_dead_job(make_services, tenant):
    """Found by a helper: a CRM title of a zero-width space (or a name of U+FE0F, a company of the braille blank)
    failed the whole record's job five times with a pydantic dump; like a field of spaces it is left out, and the
    record's other facts are stored."""
    s = make_services()
    [ep] = changes(s, tenant, [{"object": "contact", "id": "zc2", "name": "Real Name", "title": "\u200b",
                                "company": "\u2800", "city": "\ufe0f", "phone": "+1 555 0100",
                                "changed_at": "2024-06-01"}])
    assert s.ingest.job_status(tenant, ep.id).status == "done"
    person = s.graph.find_entities(tenant, "Real Name")
    assert person, "the contact was not stored"
    facts = {f.predicate: f for f in s.graph.facts_about(tenant, person[0].id)}
    assert set(facts) == {"HAS_PHONE"}, facts


def amounts(g, tenant, deal_name: str) -> list[tuple[str, str, str | None]]:
    """The deal's DEAL_AMOUNT history: (value, valid_from date, valid_to date or None), oldest first."""
    [deal] = g.find_entities(tenant, deal_name, "Deal")
    fs = g.facts_about(tenant, deal.id, include_superseded=True, predicates=["DEAL_AMOUNT"])
    return sorted((f.value, f.valid_from.date().isoformat(), f.valid_to and f.valid_to.date().isoformat()) for f in fs)


def test_a_partial_change_of_amount_or_currency_keeps_the_other_half(make_services, tenant):
    """`{amount} {currency}` from a record that gives one of them: the other comes from the value stored for the
    deal at the change (it was dropped: the job was done with no fact and no refusal)."""
    s = make_services()
    eps = feed(s, tenant, [
        {"object": "deal", "id": "d-1", "name": "Renewal", "stage": "qualified", "amount": "120000", "currency": "EUR",
         "changed_at": "2023-02-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-1", "amount": "150000", "changed_at": "2023-03-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-1", "currency": "USD", "changed_at": "2023-04-01T00:00:00+00:00"},
    ], "partial")
    assert [s.ingest.job_status(tenant, e.id).facts_asserted for e in eps] == [2, 1, 1]
    assert amounts(s.graph, tenant, "Renewal") == [("120000 EUR", "2023-02-01", "2023-03-01"),
                                                   ("150000 EUR", "2023-03-01", "2023-04-01"),
                                                   ("150000 USD", "2023-04-01", None)]
    # replayed under a new key: the same value again, nothing new
    feed(s, tenant, [{"object": "deal", "id": "d-1", "currency": "USD", "changed_at": "2023-04-01T00:00:00+00:00"}], "partial-again")
    assert len(amounts(s.graph, tenant, "Renewal")) == 3
    assert s.ingest.list_refusals(tenant) == []


def test_a_partial_change_reads_an_earlier_record_of_its_own_episode(make_services, tenant):
    s = make_services()
    ep, _ = s.ingest.append_episodes(tenant, [EpisodeIn(kind="json", occurred_at=at("2023-02-01T00:00:00+00:00"),
                                                        content=json.dumps([
        {"object": "deal", "id": "d-2", "name": "Upsell", "amount": "9000", "currency": "GBP", "changed_at": "2023-02-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-2", "currency": "CHF", "changed_at": "2023-02-02T00:00:00+00:00"}]))])[0]
    Worker(s, tenants=[tenant]).run(until_idle=True)
    assert s.ingest.job_status(tenant, ep.id).status == "done"
    assert amounts(s.graph, tenant, "Upsell") == [("9000 CHF", "2023-02-02", None),
                                                  ("9000 GBP", "2023-02-01", "2023-02-02")]


def test_a_partial_change_that_cannot_be_completed_is_refused_with_its_reason(make_services, tenant):
    """No stored value to take the other half from, a later change already stored, or the other half set to null:
    that fact alone is refused (`incomplete_value`, naming the fields, not the values); the record's other facts
    are stored."""
    s = make_services()
    g = s.graph
    feed(s, tenant, [
        {"object": "deal", "id": "d-3", "name": "Pilot", "stage": "qualified", "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-4", "name": "Expansion", "amount": "500", "currency": "EUR",
         "changed_at": "2023-06-01T00:00:00+00:00"},
    ], "refuse-0")
    eps = feed(s, tenant, [
        {"object": "deal", "id": "d-3", "amount": "700", "stage": "proposal", "changed_at": "2023-02-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-4", "amount": "900", "changed_at": "2023-07-01T00:00:00+00:00"},
        {"object": "deal", "id": "d-4", "currency": None, "changed_at": "2023-08-01T00:00:00+00:00"},
    ], "refuse-1")
    # arrives after the July change: its currency as of May is known, the July value's may not be
    late = feed(s, tenant, [{"object": "deal", "id": "d-4", "currency": "USD", "changed_at": "2023-06-15T00:00:00+00:00"}], "refuse-2")
    jobs_ = [s.ingest.job_status(tenant, e.id) for e in eps + late]
    assert [(j.facts_asserted, j.facts_refused) for j in jobs_] == [(1, 1), (1, 0), (0, 1), (0, 1)], jobs_
    [pilot] = g.find_entities(tenant, "Pilot", "Deal")
    assert [f.value for f in g.facts_about(tenant, pilot.id, predicates=["DEAL_STAGE"])] == ["proposal"]
    assert amounts(g, tenant, "Pilot") == []
    assert amounts(g, tenant, "Expansion") == [("500 EUR", "2023-06-01", "2023-07-01"), ("900 EUR", "2023-07-01", None)]
    refused = sorted((r.episode_id, r.reason, r.field, r.predicate, r.detail) for r in s.ingest.list_refusals(tenant))
    assert [r[:4] for r in refused] == sorted(
        (e.id, "incomplete_value", f"extraction.facts[{i}].value", "DEAL_AMOUNT")
        for e, i in [(eps[0], 1), (eps[2], 0), (late[0], 0)]), refused
    details = {r[0]: r[4] for r in refused}
    assert "no DEAL_AMOUNT value is stored" in details[eps[0].id] and "currency" in details[eps[0].id]
    assert "currency to null" in details[eps[2].id]
    assert "later change of DEAL_AMOUNT" in details[late[0].id]
    assert not any(v in r[4] for r in refused for v in ("700", "USD", "500"))   # fields, never values


def contact(g, tenant, name):
    [e] = g.find_entities(tenant, name, "Person")
    return e


def test_a_changed_email_replaces_the_stored_one(make_services, tenant):
    """The CRM record, named by its external id, is the source of its contact's email: a change of it replaces the
    stored one (it was dropped: the job was done, the entity kept the old email, the new one named nobody, no
    refusal). Only the change that gave the new email declares it: erasing the record that gave the old one keeps
    the new one; erasing the change strips it (the old record's declaration of the old email does not keep it)."""
    s = make_services()
    g = s.graph
    T = ["2023-01-01T00:00:00+00:00", "2023-06-01T00:00:00+00:00", "2023-07-01T00:00:00+00:00"]
    eps = feed(s, tenant, [r for c in ("c1", "c2") for r in [
        {"object": "contact", "id": c, "name": f"Dana {c}", "email": f"old-{c}@a.com", "title": "AE", "changed_at": T[0]},
        {"object": "contact", "id": c, "email": f"new-{c}@b.com", "title": "Head", "changed_at": T[1]},
        {"object": "contact", "id": c, "city": "Porto", "changed_at": T[2]}]], "email")
    one, two = contact(g, tenant, "Dana c1"), contact(g, tenant, "Dana c2")
    assert (one.email, two.email) == ("new-c1@b.com", "new-c2@b.com") and one.external_ids == ["crm:contact:c1"]
    assert s.ingest.list_refusals(tenant) == []
    ep, _ = g.append_episode(tenant, EpisodeIn(content="Dana's phone", occurred_at=at("2023-08-01T00:00:00+00:00")))
    [by_new] = g.assert_facts(tenant, [FactIn(subject=EntityRef(email="new-c1@b.com"), predicate="HAS_PHONE",
                                              value="1", episode_id=ep.id)])
    assert g.get_fact(tenant, by_new.fact_id).subject_id == one.id
    with pytest.raises(NotFound):
        g.assert_facts(tenant, [FactIn(subject=EntityRef(email="old-c1@a.com"), predicate="HAS_PHONE", value="2",
                                       episode_id=ep.id)])
    s.governance.forget(tenant, episode_id=eps[0].id)      # c1's first record: the new email stays
    assert g.get_entity(tenant, one.id).email == "new-c1@b.com"
    s.governance.forget(tenant, episode_id=eps[4].id)      # c2's change: its email goes, the first record stays
    assert g.get_entity(tenant, two.id).email is None


def test_a_late_older_record_does_not_take_back_a_changed_email(make_services, tenant):
    """helper-found: a record dated February with the old email, arriving after the March change, set the old email
    again (and another contact could then take the new one). The latest change wins, as for facts; its title is
    history."""
    s = make_services()
    g = s.graph
    feed(s, tenant, [
        {"object": "contact", "id": "c1", "name": "Dana", "email": "old@a.com", "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "contact", "id": "c1", "email": "new@b.com", "changed_at": "2023-03-01T00:00:00+00:00"}], "late-0")
    feed(s, tenant, [{"object": "contact", "id": "c1", "email": "old@a.com", "title": "AE",
                      "changed_at": "2023-02-01T00:00:00+00:00"}], "late-1")
    dana = contact(g, tenant, "Dana")
    assert dana.email == "new@b.com"
    assert titles_now(g, tenant, dana.id) == ["AE"]
    feed(s, tenant, [{"object": "contact", "id": "c1", "email": "newest@c.com", "changed_at": "2023-04-01T00:00:00+00:00"}],
         "late-2")
    assert g.get_entity(tenant, dana.id).email == "newest@c.com"   # a later change still replaces it


def test_an_email_another_entity_holds_is_refused_and_the_rest_applies(make_services, tenant):
    """A changed email that another contact holds is not moved and the two are not merged: the email alone is
    refused (`email_taken`), the record's other fields apply."""
    s = make_services()
    g = s.graph
    feed(s, tenant, [
        {"object": "contact", "id": "c1", "name": "Dana", "email": "dana@a.com", "changed_at": "2023-01-01T00:00:00+00:00"},
        {"object": "contact", "id": "c2", "name": "Ravi", "email": "ravi@a.com", "changed_at": "2023-01-01T00:00:00+00:00"},
    ], "taken-0")
    [ep] = feed(s, tenant, [{"object": "contact", "id": "c1", "email": "ravi@a.com", "title": "CFO",
                             "changed_at": "2023-06-01T00:00:00+00:00"}], "taken-1")
    job = s.ingest.job_status(tenant, ep.id)
    assert (job.status, job.facts_asserted, job.facts_refused) == ("done", 1, 0)
    dana, ravi = contact(g, tenant, "Dana"), contact(g, tenant, "Ravi")
    assert (dana.email, ravi.email) == ("dana@a.com", "ravi@a.com")
    assert [f.value for f in g.facts_about(tenant, dana.id, predicates=["HAS_TITLE"])] == ["CFO"]
    assert g.facts_about(tenant, ravi.id) == []
    [r] = s.ingest.list_refusals(tenant)
    assert (r.reason, r.field, r.episode_id) == ("email_taken", "extraction.entities[0].email", ep.id)
    assert "ravi@a.com" not in r.detail
